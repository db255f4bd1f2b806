"""The words before a number that say what it is, for the `pii` stage's number detectors.

A number is read with the context words in the `CONTEXT_CHARS` characters before it: a phone
word (`Phone:`, `телефон`, `电话`, `โทร`), a card word (`Visa`, `カード`), `SSN`, a National
Insurance word, or a veto word (`order`, `invoice`, `ISBN`, `box`, ...). The nearest one decides:
`order no. 12345678` is not a phone even if `phone` came earlier. The phone words of about 60
languages are data (`stages/data/pii/phone_words_*.tsv`), as are the other word lists the
detectors read (`word_list`).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from gristmill.stages.pii.script import DIGIT, GLUED_FROM, LETTER_OR_MARK, SPACED_LETTERS


def _data(name: str) -> str:
    return (resources.files("gristmill.stages") / "data" / "pii" / name).read_text("utf-8")


def _lines(name: str) -> list[str]:
    return [line for line in _data(name).splitlines() if line.strip() and line[0] != "#"]


@cache
def word_table(name: str) -> dict[str, str]:
    """A `code<TAB>words` file of `stages/data/pii/` as {language code: words}."""
    return dict(line.split("\t", 1) for line in _lines(name))


@cache
def word_list(name: str) -> frozenset[str]:
    """The words of a space-separated list of `stages/data/pii/`."""
    return frozenset(w for line in _lines(name) for w in line.split())


def alternation(words: dict[str, str], stem_letters: str = "") -> str:
    """One regex of all the words, as a trie (`tel(?:efon(?:[...]*)?)?`: the engine reads each
    character once per position instead of trying every word); `~` becomes `[letters]*`, `_`
    becomes `\\s+`."""
    trie: dict = {}
    for line in words.values():
        for w in line.split():
            node = trie
            for ch in w:
                node = node.setdefault(ch, {})
            node[""] = {}
    return _regex(trie, stem_letters)


def _regex(node: dict, stem: str) -> str:
    alts = []
    for ch, child in sorted(node.items()):
        if ch == "~":
            alts.append(f"[{stem}]*" + _regex(child, stem))
        elif ch == "_":
            alts.append(r"\s+" + _regex(child, stem))
        elif ch:
            alts.append(re.escape(ch) + _regex(child, stem))
    if not alts:
        return ""
    if "" not in node:
        return alts[0] if len(alts) == 1 else f"(?:{'|'.join(alts)})"
    return f"(?:{'|'.join(alts)})?"


LETTERS = SPACED_LETTERS  # the letters of scripts written with spaces between words
CONTEXT_CHARS = 40

_PHONE_WORDS = (
    r"phones?|telephone|tel|tél|telefon|telefono|teléfono|téléphone|tfno|ph|mobile|mobil|"
    r"mob|cell|cellphone|fax|dial|sms|whatsapp|contact|hotline|landline|handy|portable|natel|"
    r"message|messages|answering|(?:call|ring|text|reach)(?:ed|ing)?\s+(?:me|us|him|her|them)|"
    r"call\s+(?:at|on)|" + alternation(word_table("phone_words_spaced.tsv"), LETTERS)
)
_CARD_WORDS = r"card|cc|credit|debit|visa|mastercard|amex|maestro|kreditkarte|carte|tarjeta"
_SSN_WORDS = r"ssn|ss#|social security|social security number"
_NINO_WORDS = r"ni|nino|ni number|ni no|national insurance|insurance"
_VETO_WORDS = (
    r"order|orders|invoice|inv|ref|reference|tracking|ticket|case|account|acct|isbn|issn|doi|"
    r"serial|sku|part|model|po|batch|lot|version|ver|build|release|patent|cve|transaction|txn|"
    r"customer|booking|confirmation|receipt|item|product|article|page|pages|vol|zip|postcode|"
    r"plz|box|id|uuid|pid|uid|hash|checksum|timestamp|epoch|size|bytes|kb|mb|gb|"
    r"iso|iec|ieee|rfc|ansi|ecma|etsi|range|rango|intervalle|intervallo|intervall"
)
# Phone, card and veto words of scripts written without spaces between words (or with
# prefixes glued to words: Arabic), matched with no boundary: \w would count the neighbouring
# characters as part of the word. Cyrillic words are matched like Latin ones (тел is in
# телевизор).
_PHONE_GLUED = alternation(word_table("phone_words_glued.tsv"))
_CARD_GLUED = alternation({"": "信用卡 银行卡 クレジットカード カード 카드 บัตร بطاقة कार्ड"})
_VETO_GLUED = alternation(
    {"": "订单 訂單 注文 주문 발주 คำสั่งซื้อ طلب ऑर्डर 版本 バージョン 버전 邮编 郵便番号"}
)
# A spaced word's boundary is a letter of its own scripts (Latin, Greek, Cyrillic), not `\w`,
# so a word glued to CJK or kana (`担当TEL：`) still counts.
CONTEXT = re.compile(
    rf"(?<![{LETTERS}0-9_])(?=[{LETTERS}])(?:(?P<phone>{_PHONE_WORDS})|(?P<card>{_CARD_WORDS})"
    rf"|(?P<ssn>{_SSN_WORDS})|(?P<nino>{_NINO_WORDS})"
    rf"|(?P<veto>{_VETO_WORDS}|заказ|версия|индекс))(?![{LETTERS}0-9_])"
)
# ... searched only in a window with a character of those scripts (from Hebrew on)
CONTEXT_GLUED = re.compile(
    rf"(?P<phone>{_PHONE_GLUED})|(?P<card>{_CARD_GLUED})|(?P<veto>{_VETO_GLUED})"
)


def fold_case(text: str) -> str:
    """`text` in lower case, one character for one (`İ` is `i`, not `i` and a combining dot),
    so that every offset found in it is an offset in `text`."""
    low = text.replace("İ", "i").lower()
    if len(low) != len(text):  # another expanding capital: fold each character on its own
        low = "".join(c.lower()[:1] or c for c in text)
    return low


def context_words(text: str, s: int, chars: int = CONTEXT_CHARS) -> list[tuple[int, int, str]]:
    """The context words (`CONTEXT`, `CONTEXT_GLUED`) that start in the `chars` characters
    before `s`, as (start, end, kind) in `text`, by start. The window reads one character
    more, so that a word cut by its edge (`st|ring`) has its boundary."""
    first = max(0, s - chars)
    lo = max(0, first - 1)
    window = fold_case(text[lo:s])
    found = [
        (lo + m.start(), lo + m.end(), m.lastgroup) for m in CONTEXT.finditer(window, first - lo)
    ]
    if window and max(window) >= GLUED_FROM:
        found += [
            (lo + m.start(), lo + m.end(), m.lastgroup)
            for m in CONTEXT_GLUED.finditer(window, first - lo)
        ]
        found.sort()
    return found


def last_context(text: str, s: int, kinds: tuple[str, ...]) -> str | None:
    """The kind of the nearest context word before `s` among `kinds` (and `veto`), or None.
    A veto word counts on the number's own line only (`Box 12` on the line above an address
    block's phone number says nothing about it); a phone word may be on the line before
    (`Phone:\n555 0134`)."""
    line_start = text.rfind("\n", 0, s) + 1
    last = None
    for at, _, kind in context_words(text, s):
        if kind in kinds or (kind == "veto" and at >= line_start):
            last = kind
    return last


def is_phone_word(token: str) -> bool:
    """Is `token` (any case) one phone word, spaced or glued?"""
    t = fold_case(token)
    m = CONTEXT.fullmatch(t) or CONTEXT_GLUED.fullmatch(t)
    return m is not None and m.lastgroup == "phone"


def phone_word_end(text: str, s: int) -> int:
    """Where the phone word nearest before `s` (within CONTEXT_CHARS) ends; -1 if none."""
    return max((b for _, b, kind in context_words(text, s) if kind == "phone"), default=-1)


_GAP = " \u00a0\t.:\u055d\uff1a\u3000"  # what may stand between a phone word and its number


def phone_word_before(text: str, s: int) -> bool:
    """Does a phone word end right before `s`, with only spaces, `.` or `:` between (`Tel.:
    752247`, `síma 51905`, `โทร.0594 36 70 16`, `Հեռ.՝ 715 799`)? The number is then the one the
    word names, and it may be written as short plans write theirs."""
    lo = max(0, s - CONTEXT_CHARS)
    t = s
    while t > lo and text[t - 1] in _GAP:
        t -= 1
    if t == lo or text[t - 1] in DIGIT:
        return False
    ends = [(a, kind) for a, b, kind in context_words(text, t, t - lo) if b == t]
    if not ends or ends[-1][1] != "phone":
        return False
    at = ends[-1][0]  # not a part of a dotted name: `10.1016/j.cell.2023.11.012`
    return not (at - 2 >= lo and text[at - 1] == "." and word_char(text[at - 2]))


def word_char(c: str) -> bool:
    """A letter or mark of any script, or an ASCII digit."""
    return c in DIGIT or LETTER_OR_MARK.match(c) is not None
