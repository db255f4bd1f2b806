"""Text to the units and n-gram hashes that `decontaminate` compares, as pure functions.

Normalisation is the one of the contamination literature: Unicode compatibility forms (NFKC),
case folded, punctuation and whitespace ignored. A *unit* is a word (a run of letters, marks,
digits and `_`) in scripts written with spaces, or one character in scripts written without
them (`stages/text/scripts.SPACELESS`: Han, kana, Thai, ...), so a Chinese or Thai benchmark
item is compared by character windows and an English one by word windows, in the same text.

Every unit keeps the span of the original text it came from, so a match can be cut out without
touching any other character. Text is folded code point by code point through one table (NFKC
then casefold of that character), vectorised; only a run of letters holding a code point whose
folding is several code points (`ß`, `ﬁ`, `①`), or a combining mark in a text that is not NFC
(decomposed accents, which NFKC composes), is normalised by Python's NFKC and casefold; both ways
give the same hashes for the same normalised text.

An n-gram hash is a 64-bit hash of n consecutive unit hashes (and of n), within one text.
"""

from __future__ import annotations

import unicodedata

import numpy as np

from gristmill.stages.dedup.fuzzy.shingles import LETTER, WEIGHTS, WORD, fmix64, word_hashes
from gristmill.stages.text.scripts import CONJOINING_JAMO, SPACELESS, lookup_table

U64 = np.uint64
SEP = "\n"
NO_SPACE = lookup_table(SPACELESS)
MAX_N = len(WEIGHTS)  # n-grams up to 64 units


def _fold_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per code point: its folding when that is one code point (NFKC then casefold; a space
    for one whose folding holds no letter or digit, such as `…`); whether its folding is
    several code points with a letter or digit among them (`ß`, `ﬁ`, `①`); whether it is a
    combining mark (which NFKC may compose with what precedes it). Above the BMP a code point
    folds to itself."""
    fold = np.arange(0x110000, dtype=np.uint32)
    multi = np.zeros(0x110000, dtype=bool)
    mark = np.zeros(0x110000, dtype=bool)
    for c in range(0x10000):
        ch = chr(c)
        f = unicodedata.normalize("NFKC", ch).casefold()
        mark[c] = unicodedata.combining(ch) != 0
        if len(f) == 1:
            fold[c] = ord(f)
        elif not any(WORD[ord(x)] for x in f):
            fold[c] = 0x20
        else:
            multi[c] = True
    for lo, hi in CONJOINING_JAMO:
        multi[lo : hi + 1] = True
    return fold, multi, mark


FOLD, MULTI, MARK = _fold_table()


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _bounds(is_word: np.ndarray, alone: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the units: runs of word code points, each `alone` one its own unit."""
    w = np.zeros(len(is_word) + 2, dtype=bool)
    a = np.zeros(len(is_word) + 2, dtype=bool)
    w[1:-1], a[1:-1] = is_word, alone & is_word
    mid = slice(1, -1)
    starts = np.flatnonzero(w[mid] & (~w[:-2] | a[mid] | a[:-2]))
    ends = np.flatnonzero(w[mid] & (~w[2:] | a[mid] | a[2:])) + 1
    return starts, ends


def _codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype="<u4")


def split_normalized(norm: str) -> list[str]:
    """The units of an already normalised string."""
    units, run = [], []
    for ch in norm:
        c = ord(ch)
        if WORD[c] and not NO_SPACE[c]:
            run.append(ch)
            continue
        if run:
            units.append("".join(run))
            run = []
        if WORD[c]:
            units.append(ch)
    if run:
        units.append("".join(run))
    return units


def units_batch(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(unit hashes uint64, owner text of each, original starts, original ends), the units of
    every text in order, spans relative to their text. A run holding a code point whose
    folding is several code points, or a combining mark in a text that is not NFC, is
    normalised by Python (it may give several units, each with the run's span)."""
    joined = SEP.join(texts)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    text_starts = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=text_starts[1:])
    cp = _codepoints(joined)
    f = FOLD[cp]
    slow = MULTI[cp]
    for i in (i for i, t in enumerate(texts) if not unicodedata.is_normalized("NFC", t)):
        lo = text_starts[i]
        slow[lo : lo + lengths[i]] |= MARK[cp[lo : lo + lengths[i]]]
    starts, ends = _bounds(WORD[f] | slow, NO_SPACE[f] & ~slow)
    if not len(starts):
        z = np.zeros(0, dtype=np.int64)
        return np.zeros(0, dtype=U64), z, z, z
    csum = np.zeros(len(cp) + 1, dtype=np.int64)
    np.cumsum(slow, out=csum[1:])
    is_slow = csum[ends] > csum[starts]
    fast = ~is_slow
    hashes = [word_hashes(f, starts[fast], ends[fast])]
    gs, ge = [starts[fast]], [ends[fast]]
    if is_slow.any():
        subs, sub_s, sub_e = [], [], []
        for s, e in zip(starts[is_slow].tolist(), ends[is_slow].tolist(), strict=True):
            for u in split_normalized(normalize(joined[s:e])):
                subs.append(u)
                sub_s.append(s)
                sub_e.append(e)
        if subs:
            ucp = _codepoints(SEP.join(subs))
            ulen = np.fromiter(map(len, subs), dtype=np.int64, count=len(subs))
            us = np.zeros(len(subs), dtype=np.int64)
            np.cumsum(ulen[:-1] + 1, out=us[1:])
            hashes.append(word_hashes(ucp, us, us + ulen))
            gs.append(np.array(sub_s, dtype=np.int64))
            ge.append(np.array(sub_e, dtype=np.int64))
    h, gs, ge = np.concatenate(hashes), np.concatenate(gs), np.concatenate(ge)
    order = np.argsort(gs, kind="stable")  # a run's units share its start: kept in order
    h, gs, ge = h[order], gs[order], ge[order]
    owner = np.searchsorted(text_starts, gs, side="right") - 1
    return h, owner, gs - text_starts[owner], ge - text_starts[owner]


def ngram_hashes(units: np.ndarray, owner: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(64-bit hash of every n consecutive units of one text, the index of its first unit)."""
    m = len(units) - n + 1
    if m <= 0:
        return np.zeros(0, dtype=U64), np.zeros(0, dtype=np.int64)
    acc = np.full(m, n, dtype=U64) * LETTER
    tmp = np.empty(m, dtype=U64)
    for k in range(n):
        acc += np.multiply(units[k : k + m], WEIGHTS[k], out=tmp)
    inside = np.flatnonzero(owner[:m] == owner[n - 1 :])
    return fmix64(acc[inside]), inside
