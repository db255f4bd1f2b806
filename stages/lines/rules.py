"""The line rules of `line_clean`: C4's (Raffel et al. 2020, section 2.2) and FineWeb's
(Penedo et al. 2024), each in the form its script needs. `judge` gives the first rule a line
fails, in the order of `RULES`, or None.

- `lorem_ipsum`, `javascript`, `curly_braces`: C4's (it drops the page for the first and the
  last; here only the line goes). Matched after NFKC, so full-width `ｊａｖａｓｃｒｉｐｔ` and
  `｛` count.
- `policy`: C4's policy and cookie phrases, and their like in other languages
  (`stages/data/line_phrases.yaml`).
- `max_word_length`: a word longer than this; a run of a script written without spaces is not
  a word (a Chinese paragraph is one run).
- `dup_line`: FineWeb's duplicated lines: a line the page had already (normalised).
- `min_words`: fewer words than this. A word is a whitespace-separated token holding a letter
  or digit; letters of scripts written without spaces count `LETTERS_PER_WORD` of their script
  to a word, with or without spaces between them.
- `terminal_punct`: the line does not end (after closing quotes and brackets) in a sentence end
  of the script of its last letter (`stages/text/scripts.py`), nor in `.!?` or their full-width
  forms, which every script's pages use; an ellipsis is no end. A line whose script has no
  sentence-ending mark (Thai, Lao: a space ends a sentence) is never removed by this rule.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import cache

import ahocorasick
import yaml

from gristmill.stages.text.scripts import (
    SPACELESS,
    SPACELESS_MARKS,
    TERMINAL_PUNCTUATION,
    char_class,
    is_spaceless,
    script,
    script_of,
)
from gristmill.stages.text.wordlists import DATA

RULES = (
    "lorem_ipsum",
    "javascript",
    "policy",
    "curly_braces",
    "max_word_length",
    "dup_line",
    "min_words",
    "terminal_punct",
)
# letters of a script written without spaces per word (the mean word length; a Chinese or
# Japanese word is about two characters, as the quality stage's n-grams take it)
LETTERS_PER_WORD = {
    "Han": 2.0,
    "Hiragana": 2.0,
    "Katakana": 2.0,
    "Thai": 4.0,
    "Lao": 4.0,
    "Khmer": 4.0,
    "Myanmar": 3.0,
    "Tibetan": 3.0,
}
COMMON_ENDS = ".!?．！？"  # used at the end of sentences of every script's pages
CLOSERS = "\"'”’»›)]}）］｝」』】〕〉》｣＂＇"
ELLIPSES = ("...", "…", "。。。", "・・・")
SPACELESS_LETTER = re.compile(f"[{char_class(SPACELESS)}]")
# a whitespace-separated token holding a letter or digit (str.isalnum's, as \w less "_")
TOKEN_WITH_TEXT = re.compile(r"\S*?[^\W_]\S*")
SPACELESS_MARK = re.compile(f"[{char_class(SPACELESS_MARKS)}]")


@cache
def phrases() -> tuple[ahocorasick.Automaton, ahocorasick.Automaton]:
    """Matchers of (the phrases as written, those of spaceless scripts without spaces)."""
    table = yaml.safe_load((DATA / "line_phrases.yaml").read_text(encoding="utf-8"))
    every = sorted({fold(p) for ps in table.values() for p in ps})
    spaceless = [p for p in every if all(is_spaceless(ch) for ch in p.replace(" ", ""))]
    return _automaton(every), _automaton([p.replace(" ", "") for p in spaceless])


def _automaton(words: list[str]) -> ahocorasick.Automaton:
    a = ahocorasick.Automaton()
    for w in words:
        a.add_word(w, w)
    a.make_automaton()
    return a


def fold(line: str) -> str:
    """NFKC, lower case, whitespace runs one space: what the phrase rules compare."""
    if not unicodedata.is_normalized("NFKC", line):
        line = unicodedata.normalize("NFKC", line)
    return " ".join(line.lower().split())


def words(body: str) -> float:
    """Words of a line, alike with and without spaces between the letters of spaceless
    scripts: tokens of other scripts holding a letter or digit, plus each spaceless script's
    letters (its combining marks go with them) over its letters per word."""
    found = SPACELESS_LETTER.findall(body)
    if not found:
        return len(TOKEN_WITH_TEXT.findall(body))
    runs = Counter(script_of(ch) for ch in found if not SPACELESS_MARK.match(ch))
    n = len(TOKEN_WITH_TEXT.findall(SPACELESS_LETTER.sub(" ", body)))
    return n + sum(count / LETTERS_PER_WORD.get(name or "", 1.0) for name, count in runs.items())


def longest_word(body: str) -> int:
    """The longest whitespace token, outside runs of spaceless scripts."""
    return max((len(t) for t in SPACELESS_LETTER.sub(" ", body).split()), default=0)


def last_script(body: str) -> str | None:
    """The script of the line's last letter (None: no letter of a listed script)."""
    for ch in reversed(body):
        if unicodedata.category(ch)[0] == "L":
            return script_of(ch)
    return None


@cache
def ends_for(name: str | None) -> str | None:
    """The marks that end a sentence of script `name` (None: the script has none)."""
    if name is None:
        return TERMINAL_PUNCTUATION + COMMON_ENDS
    s = script(name)
    if not s.terminals and s.spaceless:
        return None
    return s.terminals + COMMON_ENDS


def ends_sentence(body: str) -> bool | None:
    """Whether the line ends a sentence; None when its script cannot tell."""
    ends = ends_for(last_script(body))
    if ends is None:
        return None
    tail = body.rstrip().rstrip(CLOSERS).rstrip()
    if not tail or tail.endswith(ELLIPSES):
        return False
    return tail[-1] in ends


def judge(body: str, params, seen: set[str]) -> str | None:
    """The first rule of `RULES` that the line `body` fails under `params`, or None; `seen`
    holds the page's earlier lines, folded (this one is added)."""
    f = fold(body)
    first_copy = f not in seen
    seen.add(f)
    if params.lorem_ipsum and "lorem ipsum" in f:
        return "lorem_ipsum"
    if params.javascript and "javascript" in f:
        return "javascript"
    if params.policy and _has_phrase(f):
        return "policy"
    if params.curly_braces and ("{" in f or "}" in f):
        return "curly_braces"
    too_long = params.max_word_length and len(body) > params.max_word_length
    if too_long and longest_word(body) > params.max_word_length:
        return "max_word_length"
    if params.dup_lines and not first_copy:
        return "dup_line"
    if params.min_words and words(body) < params.min_words:
        return "min_words"
    if params.terminal_punct and ends_sentence(body) is False:
        return "terminal_punct"
    return None


def _has_phrase(f: str) -> bool:
    every, spaceless = phrases()
    if next(every.iter(f), None) is not None:
        return True
    bare = f.replace(" ", "")
    return bare != f and next(spaceless.iter(bare), None) is not None
