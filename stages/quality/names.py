"""Names shared by the quality signals and their compiled scan (`scan.py` imports numba, this
module does not, so configs and rules can name the signals without loading it)."""

from gristmill.stages.text.scripts import TERMINAL_PUNCTUATION

TOP_NGRAMS = (2, 3, 4)
DUP_NGRAMS = (5, 6, 7, 8, 9, 10)
TOP_SIGNALS = tuple(f"gopher_top_{n}gram" for n in TOP_NGRAMS)
DUP_SIGNALS = tuple(f"gopher_dup_{n}gram" for n in DUP_NGRAMS)
NGRAM_SIGNALS = (*TOP_SIGNALS, *DUP_SIGNALS)
UPPER = "A-ZÀ-ÖØ-ÞΑ-ΩА-ЯЁ"  # the capital letters of capital words and case joins
LOWER = "a-zß-öø-ÿα-ωа-яё"  # the lower-case letters before a case join's capital
# what ends a line that C4 counts as a sentence: every script's sentence end, or a closing quote
TERMINAL_PUNCT = (*TERMINAL_PUNCTUATION, '"', "'", "”", "»")
ELLIPSES = ("...", "…")
# a line with two of these and no terminal punctuation is a menu row ("Home | News | About")
SEPARATORS = "|»›·•"
LINK_WORDS = 4  # a line of at most this many words and no terminal punctuation: a link item
PROSE_WORDS = 15  # words per line at which a page's lines count fully as prose
BULLETS = ("•", "-", "*", "‣", "◦", "·", "–", "—", "▪", "►")
# stripped from both ends of a word before it is looked up in a stop-word list
WORD_PUNCT = ".,;:!?\"'()[]{}«»“”„‘’¿¡-–—…"
# paragraphs are separated by an empty (or blank) line
PARAGRAPH_BREAK = r"\n[ \t\r\f\v]*\n\s*"
