"""Text to shingles for every fuzzy method, as pure vectorised functions of (texts, parameters).

Text is normalised (NFKC, lower case) and cut into words: runs of letters, marks, digits and
`_` (Unicode categories L, M, N; code points above the BMP count as letters), so punctuation
and whitespace never make two texts differ. A shingle is `n` consecutive words (default 5);
texts mostly in scripts written without spaces (`text.scripts.SPACELESS`: over 30% of the
letters) use `n` consecutive letters instead (`mode="auto"`). A text with
fewer than `n` units is one shingle of all of them.

A whole batch of texts is processed at once, joined by newlines (which no word crosses) into
one array of code points: per-text numpy calls cost more than the arithmetic on a typical web
page, so there are none. Word hashes are position-weighted sums of the letters (differences of
running sums), shingle hashes weighted sums of word hashes, each finished with the MurmurHash3
64-bit finaliser and cut to 32 bits. A text's shingles do not depend on the batch it is in.
"""

from __future__ import annotations

import unicodedata
from typing import Literal

import numpy as np

from gristmill.stages.text.scripts import CONJOINING_JAMO, SPACELESS, lookup_table

U64 = np.uint64
NO_SPACE_SHARE = 0.3  # above this share of letters in no-space scripts: letter shingles
CHUNK_CHARS = 1 << 16
SEP = "\n"  # joins the texts of a batch: not a letter, and NFKC and lower() never cross it
Mode = Literal["auto", "word", "char"]

LETTER = U64(0x9E3779B97F4A7C15)  # odd 64-bit constants: a letter's weight, and (below)
FMIX64 = (U64(33), U64(0xFF51AFD7ED558CCD), U64(0xC4CEB9FE1A85EC53))
WEIGHTS = (np.arange(1, 65, dtype=U64) * U64(0xD6E8FEB86659FD93)) | U64(1)  # per position


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per code point: is it part of a word; must a text holding it go through NFKC (it is
    changed into other letters: full-width forms, ligatures, "™" -> "tm"; or it may compose
    with what precedes it: marks, Hangul jamo); is it of a script written without spaces
    (checked after NFKC, which turns half-width kana into full-width).
    Above the BMP everything counts as a letter that NFKC leaves alone."""
    word = np.ones(0x110000, dtype=bool)
    needs_nfkc = np.zeros(0x110000, dtype=bool)
    for c in range(0x10000):
        ch = chr(c)
        cat = unicodedata.category(ch)
        word[c] = cat[0] in "LMN"
        nf = unicodedata.normalize("NFKC", ch)
        changes_word = nf != ch and (word[c] or any(x.isalnum() for x in nf))
        needs_nfkc[c] = changes_word or cat[0] == "M" or unicodedata.combining(ch) != 0
    word[ord("_")] = True
    for lo, hi in CONJOINING_JAMO:  # they compose into syllables
        needs_nfkc[lo : hi + 1] = True
    return word, needs_nfkc, lookup_table(SPACELESS)


WORD, NEEDS_NFKC, NO_SPACE = _tables()


def fmix64(h: np.ndarray) -> np.ndarray:
    s, m1, m2 = FMIX64
    h = h ^ (h >> s)
    h *= m1
    h ^= h >> s
    h *= m2
    return h ^ (h >> s)


def _codepoints(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(code points of the texts joined by SEP, where each text starts in them)."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    starts = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=starts[1:])
    return np.frombuffer(SEP.join(texts).encode("utf-32-le"), dtype="<u4"), starts


def normalized_codepoints(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """NFKC + lower case, with NFKC run only on the texts that hold a code point needing it
    (NFKC is the costliest step, and most texts need none)."""
    low = [t.lower() for t in texts]
    cp, starts = _codepoints(low)
    flagged = np.flatnonzero(NEEDS_NFKC[cp])
    if len(flagged):
        owners = np.searchsorted(starts, flagged, side="right") - 1  # sorted: distinct by a mask
        for i in owners[np.r_[True, owners[1:] != owners[:-1]]].tolist():
            low[i] = unicodedata.normalize("NFKC", texts[i]).lower()
        cp, starts = _codepoints(low)
    return cp, starts


def word_bounds(is_word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the runs of True, ends exclusive."""
    padded = np.zeros(len(is_word) + 2, dtype=np.int8)
    padded[1:-1] = is_word.view(np.int8)
    bounds = np.flatnonzero(padded[1:] != padded[:-1])
    return bounds[0::2], bounds[1::2]


_INDEX = np.arange(1 << 16, dtype=U64)  # 0, 1, 2, ... grown on demand


def _index(n: int) -> np.ndarray:
    global _INDEX
    if len(_INDEX) < n:
        _INDEX = np.arange(max(n, 2 * len(_INDEX)), dtype=U64)
    return _INDEX[:n]


def word_hashes(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """64-bit hash of each word cp[starts[k]:ends[k]]: sum(v(c) * (position in word + 1)) and
    sum(v(c)), mixed, where v(c) = (c + 1) * LETTER. Both come from two running sums over all
    code points, as sum(v * i) - (start - 1) * sum(v): no per-letter position is ever built,
    and cumsum's wrap modulo 2^64 is the arithmetic. Letters in another order give another
    hash (the weights differ), and what lies between words never counts."""
    if not len(starts):
        return np.zeros(0, dtype=U64)
    v = cp.astype(U64)
    v += U64(1)
    v *= LETTER
    plain = np.cumsum(v)
    v *= _index(len(cp))
    weighted = np.cumsum(v)
    last, before = ends - 1, starts - 1
    has_before = starts > 0
    s_plain = plain[last] - np.where(has_before, plain[before], U64(0))
    s_weighted = weighted[last] - np.where(has_before, weighted[before], U64(0))
    s_weighted -= before.astype(U64) * s_plain  # positions from 1 within the word
    return fmix64(s_weighted ^ fmix64(s_plain))


def _all_of(units: np.ndarray) -> int:
    acc = units * WEIGHTS[np.arange(len(units)) % len(WEIGHTS)]
    return int(fmix64(np.atleast_1d(acc.sum(dtype=U64)))[0] >> U64(32))


def grouped_ngrams(units: np.ndarray, group: np.ndarray, n: int, n_groups: int):
    """(32-bit hashes, their group) of every run of n consecutive units within a group
    (`group` sorted); a group with fewer than n units gets one hash of all of them."""
    hashes, owner = [np.zeros(0, dtype=np.uint32)], [np.zeros(0, dtype=np.int64)]
    m = len(units) - n + 1
    if m > 0:
        acc = units[:m] * WEIGHTS[0]
        tmp = np.empty_like(acc)
        for k in range(1, n):
            acc += np.multiply(units[k : k + m], WEIGHTS[k % len(WEIGHTS)], out=tmp)
        inside = group[:m] == group[n - 1 :]
        hashes.append((fmix64(acc[inside]) >> U64(32)).astype(np.uint32))
        owner.append(group[:m][inside])
    counts = np.bincount(group, minlength=n_groups)
    short = np.flatnonzero((counts > 0) & (counts < n))
    if len(short):
        firsts = np.searchsorted(group, short)
        hashes.append(
            np.array(
                [_all_of(units[f : f + c]) for f, c in zip(firsts, counts[short], strict=True)],
                dtype=np.uint32,
            )
        )
        owner.append(short)
    return np.concatenate(hashes), np.concatenate(owner)


def shingle_batch(texts: list[str], n_words: int = 5, n_chars: int = 5, mode: Mode = "auto"):
    """(hashes, offsets, by_letters): the texts' shingles as 32-bit hashes (repeats kept),
    text i's at hashes[offsets[i]:offsets[i + 1]], and whether it used letter shingles.
    Worked in runs of about CHUNK_CHARS characters: arrays that stay in cache, and no fresh
    memory to fault in for every step."""
    runs, run, size = [], [], 0
    for t in texts:
        run.append(t)
        size += len(t)
        if size >= CHUNK_CHARS:
            runs.append(run)
            run, size = [], 0
    if run or not runs:
        runs.append(run)
    if len(runs) == 1:
        return _shingle_run(runs[0], n_words, n_chars, mode)
    parts = [_shingle_run(r, n_words, n_chars, mode) for r in runs]
    shifts = np.cumsum([0] + [p[1][-1] for p in parts[:-1]])
    offsets = np.concatenate([[0]] + [p[1][1:] + k for p, k in zip(parts, shifts, strict=True)])
    return (
        np.concatenate([p[0] for p in parts]),
        offsets,
        np.concatenate([p[2] for p in parts]),
    )


def _shingle_run(texts: list[str], n_words: int, n_chars: int, mode: Mode):
    n = len(texts)
    cp, text_starts = normalized_codepoints(texts)
    starts, ends = word_bounds(WORD[cp])
    lengths = ends - starts
    word_text = np.searchsorted(text_starts, starts, side="right") - 1
    by_letters = np.full(n, mode == "char")
    no_space = np.flatnonzero(NO_SPACE[cp]) if mode == "auto" else ()
    if len(no_space):  # most batches have none: count them per text only when there are
        in_text = np.bincount(np.searchsorted(text_starts, no_space, side="right") - 1, minlength=n)
        letters = np.bincount(word_text, weights=lengths, minlength=n)
        by_letters = in_text > NO_SPACE_SHARE * letters
    parts = []
    words = ~by_letters[word_text]
    if words.any():
        wh = word_hashes(cp, starts[words], ends[words])
        parts.append(grouped_ngrams(wh, word_text[words], n_words, n))
    if not words.all():  # letter shingles: the letters of those texts, back to back
        letter_text = np.repeat(word_text[~words], lengths[~words])
        span = np.repeat(
            starts[~words] - np.cumsum(np.r_[0, lengths[~words][:-1]]), lengths[~words]
        )
        chars = cp[np.arange(len(letter_text)) + span]
        parts.append(grouped_ngrams(fmix64(chars.astype(U64) + U64(1)), letter_text, n_chars, n))
    hashes = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.uint32)
    owner = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    order = np.argsort(owner, kind="stable")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=offsets[1:])
    return hashes[order], offsets, by_letters


def shingle_hashes(text: str, n_words: int = 5, n_chars: int = 5, mode: Mode = "auto"):
    """One text's shingles as 32-bit hashes (repeats kept), and whether they are letters."""
    hashes, _, by_letters = shingle_batch([text], n_words, n_chars, mode)
    return hashes, bool(by_letters[0])
