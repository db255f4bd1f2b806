"""fastText's `predict` (k=1) of a supervised model with hierarchical softmax, compiled with
numba: the same labels and the same float32 scores as fastText's own, bit for bit, at a fraction
of its cost (`langid` uses it for lid.176; `tests/stages/langid/test_kernel.py` and
`bench/speed/langid_kernel.py` compare the two).

What fastText 0.9.2 does, step by step, and so what this does:
- A line is cut into tokens at the bytes space, `\\n`, `\\r`, `\\t`, `\\v`, `\\f` and NUL of its
  UTF-8; the `\\n` that ends it is the token `</s>`, and a `</s>` ends the line.
- A token in the dictionary adds its own row and the rows of its character n-grams (listed once,
  at load); any other token (but one starting with `__label__`, a label) adds the rows of the
  n-grams of `<token>`: `minn` to `maxn` characters (never cutting a UTF-8 sequence), each hashed
  with 32-bit FNV-1a over signed bytes, modulo `bucket`, mapped through the model's pruning
  index (an n-gram pruned away adds nothing).
- The hidden vector is the float32 sum of those rows, in that order, times `1 / rows`; a
  quantized row is its product-quantizer centroids (times the norm's, with `qnorm`), which is
  what fastText adds.
- The label is the leaf the depth-first walk of the Huffman tree over the labels reaches with
  the highest log-score, pruned as fastText prunes (below log(1e-5), or below the best so far),
  with fastText's roundings (`1 / (1 + exp(-f))` in float then double, `log(x + 1e-5)` in
  double); its score is `exp` of that.

Models this does not cover (softmax or one-vs-all loss, word n-grams, a quantized output
matrix) are left to fastText (`read_model` returns None)."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gristmill.stages.langid.kernel import fill_subwords, fill_word_table, predict_lines

MAGIC, VERSION = 793712314, 12
HS, SUPERVISED = 1, 3  # fastText's loss_name::hs and model_name::sup
WORD, LABEL = 0, 1  # entry_type
EOS = b"</s>"
_F32 = np.float32


@dataclass
class Model:
    """The arrays the kernel reads (names as in fastText's sources)."""

    labels: list[str]
    nwords: int
    minn: int
    maxn: int
    bucket: int
    pruned: int  # pruneidx_size_: -1 none, else the n-grams kept
    eos_id: int  # the entry `</s>`, or -1
    words: np.ndarray  # uint8: every dictionary entry's bytes, one after the other
    word_end: np.ndarray  # int64: entry i is words[word_end[i-1]:word_end[i]]
    types: np.ndarray  # int8: WORD or LABEL
    word2int: np.ndarray  # int32: fastText's open-addressing table
    kept: np.ndarray  # uint64 (buckets / 64, 2): a bit per n-gram bucket kept, bits before
    sub_end: np.ndarray  # int64: word i's rows are subs[sub_end[i-1]:sub_end[i]]
    subs: np.ndarray  # int32
    rows: np.ndarray  # float32 (rows, dim): the input matrix (a quantized one's, dequantized)
    output: np.ndarray  # float32 (labels - 1, dim): the inner nodes' vectors
    left: np.ndarray  # int32: the Huffman tree's children (-1: a leaf)
    right: np.ndarray


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def array(self, dtype, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype, count, self.at)
        self.at += out.nbytes
        return out

    def cstring(self) -> bytes:
        end = self.data.index(b"\0", self.at)
        out, self.at = self.data[self.at : end], end + 1
        return out


def _centroids(r: _Reader):
    dim, nsubq, dsub, lastdsub = r.take("4i")
    return r.array("<f4", dim * 256), nsubq, dsub, lastdsub


def _quantized(r: _Reader, dim: int) -> np.ndarray:
    """A QuantMatrix's rows as fastText's `addcode` adds them: each subquantizer's centroid
    (`get_centroids`), times the row's norm with `qnorm`, in float."""
    qnorm, m, _n, codesize = r.take("?qqi")
    codes = r.array(np.uint8, codesize)
    cents, nsubq, dsub, lastdsub = _centroids(r)
    codes = codes.reshape(m, nsubq).astype(np.int64)
    rows = np.empty((m, dim), _F32)
    for q in range(nsubq):
        d = lastdsub if q == nsubq - 1 else dsub
        rows[:, q * dsub : q * dsub + d] = cents[
            q * 256 * dsub + codes[:, q, None] * d + np.arange(d)
        ]
    if qnorm:
        norm_codes = r.array(np.uint8, m)
        rows *= _centroids(r)[0][norm_codes.astype(np.int64)][:, None]
    return rows


def _dense(r: _Reader) -> np.ndarray:
    m, n = r.take("qq")
    return r.array("<f4", m * n).reshape(m, n)


def read_model(path: str | Path) -> Model | None:
    """The model file at `path` (fastText's own format), or None where this kernel does not
    cover it (see the module's docstring)."""
    r = _Reader(Path(path).read_bytes())
    if r.take("2i") != (MAGIC, VERSION):
        return None
    dim, _ws, _epoch, _min_count, _neg, word_ngrams, loss, model, bucket, minn, maxn = r.take("11i")
    r.take("id")  # lrUpdateRate, t
    size, nwords, _nlabels, _ntokens, pruned = r.take("3iqq")
    entries, counts, types = [], [], []
    for _ in range(size):
        entries.append(r.cstring())
        count, kind = r.take("qb")
        counts.append(count)
        types.append(kind)
    pairs = r.array("<i4", 2 * max(pruned, 0)).reshape(-1, 2)
    rows = _quantized(r, dim) if r.take("?") else _dense(r)
    if r.take("?"):  # a quantized output matrix
        return None
    output = _dense(r)
    if model != SUPERVISED or loss != HS or word_ngrams > 1 or maxn <= 0 or size - nwords < 2:
        return None
    dictionary = Dictionary(entries, counts, types, nwords, minn, maxn, bucket, pruned, pairs)
    return build(dictionary, rows, output)


@dataclass(frozen=True)
class Dictionary:
    """A model's dictionary as its file holds it: the entries (bytes) with their counts and
    kinds (WORD or LABEL), the first `nwords` of them words; the subword n-grams' lengths
    (`minn` to `maxn`) and hash buckets; and its pruning index (`pruned` n-grams kept: pairs
    of n-gram bucket and row past nwords; -1: not pruned)."""

    entries: list[bytes]
    counts: list[int]
    types: list[int]
    nwords: int
    minn: int
    maxn: int
    bucket: int
    pruned: int
    pairs: np.ndarray


def build(d: Dictionary, rows: np.ndarray, output: np.ndarray) -> Model:
    """The kernel's arrays of a model's dictionary (`d`), input rows and output matrix.

    The n-grams' rows are put in the order of their buckets, so that a bucket's row is found by
    counting the kept buckets before it (`kept`: 2 bits a bucket, in the CPU's cache) rather
    than in a table as long as the buckets (8 MB for lid.176); their values do not change."""
    entries, nwords, pairs = d.entries, d.nwords, d.pairs
    kept = np.zeros((d.bucket // 64 + 1 if d.pruned > 0 else 0, 2), np.uint64)
    if d.pruned > 0:
        order = np.argsort(pairs[:, 0], kind="stable")
        take = np.concatenate([np.arange(nwords), nwords + pairs[order, 1]])
        rows = rows[take]
        buckets = pairs[order, 0].astype(np.int64)
        np.bitwise_or.at(kept[:, 0], buckets >> 6, np.uint64(1) << (buckets & 63).astype(np.uint64))
        ones = np.bincount(buckets >> 6, minlength=len(kept))
        kept[:, 1] = np.concatenate([[0], np.cumsum(ones)[:-1]])
    words = np.frombuffer(b"".join(entries), np.uint8).copy()
    word_end = np.cumsum([len(e) for e in entries], dtype=np.int64)
    m = Model(
        labels=[e.decode("utf-8", "replace") for e in entries[nwords:]],
        nwords=nwords, minn=d.minn, maxn=d.maxn, bucket=d.bucket, pruned=d.pruned,
        eos_id=entries.index(EOS) if EOS in entries else -1,
        words=words, word_end=word_end, types=np.array(d.types, np.int8),
        word2int=_word_table(words, word_end), kept=kept,
        sub_end=np.zeros(0, np.int64), subs=np.zeros(0, np.int32),
        rows=_own(rows, _F32), output=_own(output, _F32),
        left=np.zeros(0, np.int32), right=np.zeros(0, np.int32),
    )  # fmt: skip
    m.sub_end, m.subs = _word_subwords(m)
    m.left, m.right = _huffman([c for c, t in zip(d.counts, d.types, strict=True) if t == LABEL])
    return m


def _own(a: np.ndarray, dtype) -> np.ndarray:
    """A writable, contiguous copy: numba compiles a function once per array type, and a
    read-only view of the file is another type than the arrays of the model built at import."""
    return np.array(a, dtype, order="C")


def _word_table(words: np.ndarray, word_end: np.ndarray) -> np.ndarray:
    """fastText's `word2int_`: ceil(size / 0.7) slots, linear probing from hash % slots."""
    size = len(word_end)
    table = np.full(math.ceil(size / 0.7), -1, np.int32)
    fill_word_table(words, word_end, table)
    return table


def _word_subwords(m: Model) -> tuple[np.ndarray, np.ndarray]:
    """fastText's `initNgrams`: each entry's rows, its own first, then its n-grams' (none for
    `</s>`)."""
    lengths = np.diff(m.word_end, prepend=0)
    subs = np.empty(int((1 + (m.maxn + 1) * (lengths + 2)).sum()), np.int32)
    ends = np.empty(len(m.word_end), np.int64)
    n = fill_subwords(
        m.words, m.word_end, m.eos_id, m.minn, m.maxn, m.bucket, m.pruned, m.kept, m.nwords,
        subs, ends,
    )  # fmt: skip
    return ends, subs[:n].copy()


def _huffman(counts: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """fastText's `buildTree`: leaves are the labels in dictionary order, node i >= labels joins
    the two lightest left, taken from the leaves (from the end) or the nodes built so far."""
    osz = len(counts)
    count = np.full(2 * osz - 1, 10**15, np.int64)
    count[:osz] = counts
    left = np.full(2 * osz - 1, -1, np.int32)
    right = np.full(2 * osz - 1, -1, np.int32)
    leaf, node = osz - 1, osz
    for i in range(osz, 2 * osz - 1):
        mini = [0, 0]
        for j in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                mini[j], leaf = leaf, leaf - 1
            else:
                mini[j], node = node, node + 1
        left[i], right[i] = mini
        count[i] = count[mini[0]] + count[mini[1]]
    return left, right


def predict(m: Model, texts: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The label index (-1: no label) and float32 score of each line of UTF-8 `texts` (without
    their `\\n`)."""
    ends = np.cumsum([len(t) for t in texts], dtype=np.int64)
    buf = np.frombuffer(b"".join(texts), np.uint8)
    label = np.empty(len(texts), np.int32)
    score = np.empty(len(texts), _F32)
    predict_lines(
        buf, ends, m.minn, m.maxn, m.bucket, m.pruned, m.kept, m.nwords, m.eos_id, m.words,
        m.word_end,
        m.types, m.word2int, m.sub_end, m.subs, m.rows,
        m.output, m.left, m.right, label, score,
    )  # fmt: skip
    return label, score


class Predictor:
    """`predict(texts, k=1)` as fastText's Python model answers it (a list of labels and an
    array of scores per text), from the compiled kernel; a text that is not valid UTF-8 (a lone
    surrogate) goes to fastText itself (`fallback()`), which decides what it does with it."""

    def __init__(self, model: Model, fallback):
        self.m, self.fallback = model, fallback

    def predict(self, texts: list[str], k: int = 1):
        if k != 1:
            return self.fallback().predict(texts, k=k)
        if any("\n" in t for t in texts):  # fastText's own check
            raise ValueError("predict processes one line at a time (remove '\\n')")
        try:
            lines = [t.encode() for t in texts]
        except UnicodeEncodeError:
            return self.fallback().predict(texts, k=k)
        label, score = predict(self.m, lines)
        found = label.tolist()
        return (
            [[self.m.labels[i]] if i >= 0 else [] for i in found],
            [score[t : t + 1] if i >= 0 else score[:0] for t, i in enumerate(found)],
        )


# compiles the kernels (or loads them from numba's cache) at import, on a model of two labels:
# a run's workers are forked from a process that imported this (`LangId.preload`)
_TINY = build(
    Dictionary(
        [EOS, b"a", b"__label__a", b"__label__b"], [1, 1, 2, 1], [WORD, WORD, LABEL, LABEL],
        2, 2, 4, 64, -1, np.zeros((0, 2), np.int32),
    ),
    np.ones((66, 2), _F32),
    np.ones((1, 2), _F32),
)  # fmt: skip
predict(_TINY, [b"a b"])
