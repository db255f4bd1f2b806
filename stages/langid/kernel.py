"""fastText's predict (k=1, hierarchical softmax) and the dictionary set-up it needs, compiled
with numba (`cache=True`: compiled once, then loaded from numba's cache). `model.py` reads the
model file into the arrays these functions take and says what fastText does, step by step.

Helpers take scalars only: numba counts the references of an array passed to a call (an atomic
add and subtract each), which in a loop over bytes costs more than the work itself."""

from __future__ import annotations

import math

import numba
import numpy as np

LABEL_PREFIX = b"__label__"
_LABEL = np.frombuffer(LABEL_PREFIX, np.uint8).copy()


@numba.njit(cache=True, nogil=True)
def _fnv(h, b):  # pragma: no cover (compiled)
    """One FNV-1a step over a byte read as a signed char, as fastText's `hash`."""
    x = b | 0xFFFFFF00 if b >= 128 else b
    return ((h ^ x) * 16777619) & 0xFFFFFFFF


@numba.njit(cache=True, nogil=True)
def _separator(c):  # pragma: no cover (compiled)
    """readWord's separators: space, \\n, \\t, \\r, \\v, \\f, NUL."""
    return c == 32 or c == 10 or c == 9 or c == 13 or c == 11 or c == 12 or c == 0


@numba.njit(cache=True, nogil=True)
def _popcount(x):  # pragma: no cover (compiled)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@numba.njit(cache=True, nogil=True)
def _std_log(x):  # pragma: no cover (compiled)
    """fastText's `std_log`: log(x + 1e-5) in double, returned as float."""
    return np.float32(math.log(np.float64(x) + 1e-5))


@numba.njit(cache=True, nogil=True)
def _ngrams(buf, start, end, minn, maxn, bucket, pruned, kept, nwords, out, n):  # pragma: no cover
    """fastText's `computeSubwords` of `<` + buf[start:end] + `>`, and `pushHash`: appends the
    rows to out[n:], returns the new n."""
    width = end - start + 2
    for i in range(width):
        c = 60 if i == 0 else (62 if i == width - 1 else buf[start + i - 1])
        if (c & 0xC0) == 0x80:
            continue
        h = 2166136261
        j = i
        k = 1
        while j < width and k <= maxn:
            h = _fnv(h, c)  # a character: its first byte, then its continuation bytes
            j += 1
            while j < width:
                c = 62 if j == width - 1 else buf[start + j - 1]
                if (c & 0xC0) != 0x80:
                    break
                h = _fnv(h, c)
                j += 1
            if k >= minn and not (k == 1 and (i == 0 or j == width)):
                b = h % bucket
                if pruned > 0:  # the bucket's rank among those kept, if kept
                    bits, bit = kept[b >> 6, 0], np.uint64(1) << np.uint64(b & 63)
                    if bits & bit:
                        before = np.int64(kept[b >> 6, 1])
                        out[n] = nwords + before + _popcount(bits & (bit - np.uint64(1)))
                        n += 1
                elif pruned < 0:
                    out[n] = nwords + b
                    n += 1
            k += 1
    return n


@numba.njit(cache=True, nogil=True)
def _find(buf, start, end, h, words, word_end, word2int):  # pragma: no cover (compiled)
    """fastText's `find`: the slot of buf[start:end] in `word2int`."""
    slots = len(word2int)
    i = h % slots
    while word2int[i] != -1:
        w = word2int[i]
        a = word_end[w - 1] if w else 0
        if word_end[w] - a == end - start:
            same = True
            for t in range(end - start):
                if buf[start + t] != words[a + t]:
                    same = False
                    break
            if same:
                break
        i = (i + 1) % slots
    return i


@numba.njit(cache=True, nogil=True)
def fill_word_table(words, word_end, table):  # pragma: no cover (compiled)
    for w in range(len(word_end)):
        a = word_end[w - 1] if w else 0
        h = 2166136261
        for i in range(a, word_end[w]):
            h = _fnv(h, words[i])
        table[_find(words, a, word_end[w], h, words, word_end, table)] = w


@numba.njit(cache=True, nogil=True)
def fill_subwords(
    words, word_end, eos_id, minn, maxn, bucket, pruned, kept, nwords, subs, ends
):  # pragma: no cover (compiled)
    n = 0
    for w in range(len(word_end)):
        subs[n] = w
        n += 1
        if w != eos_id:
            a = word_end[w - 1] if w else 0
            n = _ngrams(words, a, word_end[w], minn, maxn, bucket, pruned, kept, nwords, subs, n)
        ends[w] = n
    return n


@numba.njit(cache=True, nogil=True)
def _line_rows(
    buf, start, stop, minn, maxn, bucket, pruned, kept, nwords, eos_id, words, word_end, types,
    word2int, sub_end, subs, out,
):  # pragma: no cover (compiled)  # fmt: skip
    """fastText's getLine of buf[start:stop] + `\\n`: its rows, in order, into `out` (returned,
    grown if need be), and how many."""
    n = 0
    p = start
    while p <= stop:  # a readWord at a time
        c = buf[p] if p < stop else 10
        if c != 10 and _separator(c):
            p += 1
            continue
        if c == 10:  # with no word pending: the token `</s>`
            w, eos = eos_id, True
        else:
            a = p
            while p < stop and not _separator(buf[p]):
                p += 1
            h = 2166136261
            for i in range(a, p):
                h = _fnv(h, buf[i])
            w = word2int[_find(buf, a, p, h, words, word_end, word2int)]
            eos = p - a == 4 and buf[a] == 60 and buf[a + 1] == 47 and buf[a + 2] == 115
            eos = eos and buf[a + 3] == 62  # `</s>`
            label = p - a >= len(_LABEL)
            for i in range(len(_LABEL) if label else 0):
                label = label and buf[a + i] == _LABEL[i]
            if w < 0 and not eos and not label:  # out of vocabulary: its n-grams
                if n + (maxn + 1) * (p - a + 2) > len(out):
                    out = np.concatenate(
                        (out[:n], np.empty(n + 2 * (maxn + 1) * (p - a + 2), out.dtype))
                    )
                n = _ngrams(buf, a, p, minn, maxn, bucket, pruned, kept, nwords, out, n)
        if w >= 0 and types[w] == 0:  # a word of the dictionary (not a label)
            a, b = (sub_end[w - 1] if w else 0), sub_end[w]
            if n + b - a > len(out):
                out = np.concatenate((out[:n], np.empty(n + 2 * (b - a), out.dtype)))
            out[n : n + b - a] = subs[a:b]
            n += b - a
        if eos:
            break
    return out, n


@numba.njit(cache=True, nogil=True)
def predict_lines(
    buf, ends, minn, maxn, bucket, pruned, kept, nwords, eos_id, words, word_end, types,
    word2int, sub_end, subs, rows, output, left, right, out_label, out_score,
):  # pragma: no cover (compiled)  # fmt: skip
    dim = output.shape[1]
    hidden = np.zeros(dim, np.float32)
    line = np.empty(4096, np.int32)
    osz = (len(left) + 1) // 2
    stack_node = np.empty(2 * osz, np.int64)
    stack_score = np.empty(2 * osz, np.float32)
    floor = _std_log(np.float32(0.0))  # std_log(threshold), threshold 0
    for t in range(len(ends)):
        line, count = _line_rows(
            buf, ends[t - 1] if t else 0, ends[t], minn, maxn, bucket, pruned, kept, nwords,
            eos_id, words, word_end, types, word2int, sub_end, subs, line,
        )  # fmt: skip
        out_label[t], out_score[t] = -1, 0.0
        if count == 0:
            continue
        # computeHidden: the rows' float sum, in order (addRow; a quantized row: addcode)
        hidden[:] = 0
        for i in range(count):
            r = line[i]
            for j in range(dim):
                hidden[j] += rows[r, j]
        scale = np.float32(1.0 / count)
        for j in range(dim):
            hidden[j] *= scale
        # HierarchicalSoftmaxLoss::dfs, k = 1: left before right, a leaf replaces the best
        best, best_score = -1, np.float32(0.0)
        stack_node[0], stack_score[0] = 2 * osz - 2, np.float32(0.0)
        top = 1
        while top:
            top -= 1
            node, score = stack_node[top], stack_score[top]
            if score < floor or (best >= 0 and score < best_score):
                continue
            if left[node] == -1 and right[node] == -1:
                best, best_score = node, score
                continue
            f = np.float32(0.0)
            for j in range(dim):
                f += output[node - osz, j] * hidden[j]
            f = np.float32(1.0 / np.float64(np.float32(1.0) + math.exp(-f)))
            stack_node[top], stack_score[top] = right[node], score + _std_log(f)
            one_minus = np.float32(1.0 - np.float64(f))
            stack_node[top + 1], stack_score[top + 1] = left[node], score + _std_log(one_minus)
            top += 2
        if best >= 0:
            out_label[t], out_score[t] = best, math.exp(best_score)
