"""Text to the units and n-gram hashes that `decontaminate` compares, as pure functions.

Normalisation is the one of the contamination literature: Unicode compatibility forms (NFKC),
case folded, punctuation and whitespace ignored. A *unit* is a word (a run of letters, marks,
digits and `_`) in scripts written with spaces, or one character in scripts written without
them (`stages/text/scripts.SPACELESS`: Han, kana, Thai, ...), so a Chinese or Thai benchmark
item is compared by character windows and an English one by word windows, in the same text.

Every unit keeps the span of the original text it came from, so a match can be cut out without
touching any other character. Most texts go the vectorised way: each code point is folded on
its own through one table (NFKC then casefold of that character). A text holding a code point
whose folding is not one code point (`ß`, `ﬁ`, `①`), or that is not NFC (decomposed accents,
which NFKC would compose), goes through Python's NFKC and casefold one unit at a time instead;
both ways give the same hashes for the same normalised text.

An n-gram hash is a 64-bit hash of n consecutive unit hashes (and of n), within one text.
"""

from __future__ import annotations

import unicodedata

import numpy as np

from gristmill.stages.dedup.minhash.shingles import LETTER, WEIGHTS, WORD, fmix64, word_hashes
from gristmill.stages.text.scripts import SPACELESS, lookup_table

U64 = np.uint64
SEP = "\n"
NO_SPACE = lookup_table(SPACELESS)
MAX_N = len(WEIGHTS)  # n-grams up to 64 units


def _fold_table() -> tuple[np.ndarray, np.ndarray]:
    """(the folded code point of each BMP code point, whether its folding is not one code
    point); above the BMP a code point folds to itself."""
    fold = np.arange(0x110000, dtype=np.uint32)
    multi = np.zeros(0x110000, dtype=bool)
    for c in range(0x10000):
        f = unicodedata.normalize("NFKC", chr(c)).casefold()
        if len(f) == 1:
            fold[c] = ord(f)
        elif f != chr(c):
            multi[c] = True
    for lo, hi in [(0x1100, 0x11FF), (0xA960, 0xA97F), (0xD7B0, 0xD7FF)]:  # conjoining jamo
        multi[lo : hi + 1] = True
    return fold, multi


FOLD, MULTI = _fold_table()


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


def _slow_units(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """(normalised units, their original spans) by Python's NFKC and casefold per run."""
    cp = _codepoints(text)
    if not len(cp):
        return [], []
    starts, ends = _bounds(WORD[cp] | MULTI[cp], np.zeros(len(cp), dtype=bool))
    units, spans = [], []
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        norm = normalize(text[s:e])
        ncp = _codepoints(norm)
        ns, ne = _bounds(WORD[ncp], NO_SPACE[ncp])
        for a, b in zip(ns.tolist(), ne.tolist(), strict=True):
            units.append(norm[a:b])
            spans.append((s, e))
    return units, spans


def is_simple(text: str) -> bool:
    """Whether the table folding gives the text's normalised units."""
    return unicodedata.is_normalized("NFC", text) and not MULTI[_codepoints(text)].any()


def units_batch(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(unit hashes uint64, owner text of each, original starts, original ends), the units of
    every text in order, spans relative to their text."""
    simple = [is_simple(t) for t in texts]
    parts = []
    joined = [t if ok else "" for t, ok in zip(texts, simple, strict=True)]
    lengths = np.fromiter(map(len, joined), dtype=np.int64, count=len(texts))
    text_starts = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=text_starts[1:])
    cp = FOLD[_codepoints(SEP.join(joined))]
    starts, ends = _bounds(WORD[cp], NO_SPACE[cp])
    owner = np.searchsorted(text_starts, starts, side="right") - 1
    if len(starts):
        parts.append(
            (
                word_hashes(cp, starts, ends),
                owner,
                starts - text_starts[owner],
                ends - text_starts[owner],
            )
        )
    for i in (i for i, ok in enumerate(simple) if not ok):
        units, spans = _slow_units(texts[i])
        if not units:
            continue
        ucp = _codepoints(SEP.join(units))
        ulen = np.array([len(u) for u in units], dtype=np.int64)
        us = np.zeros(len(units), dtype=np.int64)
        np.cumsum(ulen[:-1] + 1, out=us[1:])
        sp = np.array(spans, dtype=np.int64)
        parts.append((word_hashes(ucp, us, us + ulen), np.full(len(units), i), sp[:, 0], sp[:, 1]))
    if not parts:
        z = np.zeros(0, dtype=np.int64)
        return np.zeros(0, dtype=U64), z, z, z
    cat = [np.concatenate([p[k] for p in parts]) for k in range(4)]
    order = np.argsort(cat[1], kind="stable")
    return tuple(c[order] for c in cat)


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


def whole_hash(units: np.ndarray) -> int:
    """The hash `ngram_hashes` gives a window of exactly these units."""
    h, _ = ngram_hashes(units, np.zeros(len(units), dtype=np.int64), len(units))
    return int(h[0])
