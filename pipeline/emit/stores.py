"""What the emitter reads batches from: the epoch plan (which source each slot comes from, the
order an epoch serves its slots in) and the two stores, per-source shards (StreamStore) and a
materialised mix (MixStore). pipeline/emit/emitter.py explains the batches and the guarantees."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pyarrow.parquet as pq
import xxhash

from gristmill.pipeline.emit import packed as pk
from gristmill.pipeline.emit import remote
from gristmill.pipeline.emit.arrays import IGNORE, RAMP, batch_dict
from gristmill.pipeline.mix.materialize import MIX_MANIFEST, SEGMENTS, source_shards
from gristmill.pipeline.mix.schedule import real_needed, window_shares
from gristmill.pipeline.mix.streams import Pieces, SourceStream
from gristmill.pipeline.output import manifest as mf
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.shards import ShardReader

_ORDER_TAG = 2**32 - 1  # keeps the sample order's random stream apart from the documents'


class EpochPlan:
    """One epoch of samples: the source of each schedule slot, its place among that source's
    samples, and the order in which an epoch serves the slots."""

    def __init__(
        self, sources, is_real, schedule, window: int, min_real: float, seed: int, shuffle: bool
    ):
        self.sources, self.is_real = tuple(sources), tuple(is_real)
        self.schedule = np.asarray(schedule, dtype=np.int32)
        self.window, self.min_real = window, min_real
        self.seed, self.shuffle = seed, shuffle
        self._orders: dict[int, np.ndarray] = {}
        if len(self.schedule) == 0:
            raise GristmillError("the mix has no sample: not one seq_len window fits the sources")
        k = len(self.sources)
        self.counts = np.bincount(self.schedule, minlength=k).astype(np.int64)
        self.rank = np.empty(len(self.schedule), dtype=np.int64)
        for d in range(k):
            where = np.flatnonzero(self.schedule == d)
            self.rank[where] = np.arange(len(where))
        check_floor(self.schedule, self.is_real, window, min_real)

    def __len__(self) -> int:
        return len(self.schedule)

    def fingerprint(self, *extra: np.ndarray) -> str:
        """A hash of the source of every slot (the mix's weights or schedule as planned) and of
        `extra` arrays (the streams' repeats): what a saved emitter state must match."""
        h = xxhash.xxh64(self.schedule.tobytes())
        for a in extra:
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()

    def slots(self, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(epoch, schedule slot) of global samples."""
        epoch, place = np.divmod(samples, len(self))
        if not self.shuffle:
            return epoch, place
        if (epoch == epoch[0]).all():  # a batch is consecutive samples: mostly one epoch
            return epoch, self.order(int(epoch[0]))[place]
        slot = np.empty_like(place)
        for e in np.unique(epoch).tolist():
            pick = epoch == e
            slot[pick] = self.order(e)[place[pick]]
        return epoch, slot

    def order(self, epoch: int) -> np.ndarray:
        """The slot served at each place of an epoch: a permutation inside every guard window
        by (seed, epoch), as Megatron shuffles its sample index, so a batch draws from its whole
        window instead of one stretch of a stream, and every window keeps its counts (and the
        floor). 8 bytes per sample; the last two epochs are kept."""
        got = self._orders.get(epoch)
        if got is None:
            n = len(self)
            keys = np.random.default_rng([self.seed, epoch, _ORDER_TAG]).random(n)
            got = np.lexsort((keys, np.arange(n) // self.window))
            self._orders = {epoch: got, **dict(list(self._orders.items())[-1:])}
        return got


def check_floor(schedule: np.ndarray, is_real, window: int, min_real: float) -> None:
    """The emitter's own check of the real-data floor, window by window."""
    counts = window_shares(schedule, len(is_real), window)
    real = counts[:, np.array(is_real, dtype=bool)].sum(1)
    for w, (row, r) in enumerate(zip(counts.sum(1).tolist(), real.tolist(), strict=True)):
        if r < real_needed(row, min_real):
            raise GristmillError(
                f"window {w} of the schedule has {r} real samples of {row}, "
                f"below the floor {min_real}"
            )


def _fill_boundaries(pos, doc, rows, cols, ns, gids, seq_len: int) -> None:
    """position_ids restart at every piece (a piece starts a document or a row), doc_ids are
    constant over it. Column seq_len (the last label) has neither."""
    flat_pos, flat_doc = pos.reshape(-1), doc.reshape(-1)
    ends = np.minimum(cols + ns, seq_len)
    for g, c, e, gid in zip(
        (rows * seq_len + cols).tolist(), cols.tolist(), ends.tolist(), gids.tolist(), strict=True
    ):
        if e > c:
            flat_pos[g : g + e - c] = RAMP[: e - c]
            flat_doc[g : g + e - c] = gid


class StreamStore:
    """Samples cut from per-source shards by the blend schedule (the mix, not materialised)."""

    kind = "sources"

    def __init__(
        self, streams: list[SourceStream], plan: EpochPlan, seq_len: int, seed: int, packed=None
    ):
        """packed: (every source's PackedRows, pad token id) for `packing: best_fit`."""
        self.streams, self.plan, self.seq_len, self.seed = streams, plan, seq_len, seed
        self.sources = plan.sources
        self.packed = packed
        self.packing = "best_fit" if packed else "concat"
        # plain ndarray views: slicing a np.memmap runs Python code on every slice (a store's
        # range reader, pipeline/emit/remote.py, is no ndarray and stays as it is)
        self.tokens = [[_plain(t) for t in s.tokens] for s in streams]
        self.doc_base = _doc_base([s.n_docs for s in streams])

    def fingerprint(self) -> str:
        none = np.zeros(0, dtype=np.int64)  # a stream without rehydration
        repeats = [s.repeats if s.repeats is not None else none for s in self.streams]
        return self.plan.fingerprint(*repeats)

    def fill(self, samples: np.ndarray) -> dict:
        L, plan = self.seq_len, self.plan
        epoch, j = plan.slots(samples)
        src = plan.schedule[j]
        if self.packed:
            return self._fill_packed(samples, epoch, j, src)
        windows = np.empty((len(samples), L + 1), dtype=np.int32)
        pos = np.empty((len(samples), L), dtype=np.int32)
        doc = np.empty((len(samples), L), dtype=_doc_dtype(self.doc_base))
        flat_w, flat_p, flat_d = windows.reshape(-1), pos.reshape(-1), doc.reshape(-1)
        for d in range(len(self.sources)):
            rows = np.flatnonzero(src == d)
            if len(rows) == 0:
                continue
            offsets = (epoch[rows] * plan.counts[d] + plan.rank[j[rows]]) * L
            p = self.streams[d].locate(offsets, L + 1)
            row = rows[p.row]
            tokens, shards, starts = remote.gather(self.tokens[d], p)  # a store's: at once
            # one pass per piece: its tokens, then position_ids restarting at it (a piece
            # starts a document or a row) and its doc id, over the columns < L (column L is
            # only the last label)
            for b, g, n, m, shard, s, gid in zip(
                (row * (L + 1) + p.col).tolist(),
                (row * L + p.col).tolist(),
                p.n.tolist(),
                np.minimum(p.n, L - p.col).tolist(),
                shards.tolist(),
                starts.tolist(),
                (self.doc_base[d] + p.doc).tolist(),
                strict=True,
            ):
                flat_w[b : b + n] = tokens[shard][s : s + n]
                if m > 0:
                    flat_p[g : g + m] = RAMP[:m]
                    flat_d[g : g + m] = gid
        return _batch(windows, pos, doc, samples, src)

    def _fill_packed(self, samples, epoch, j, src) -> dict:
        """Best-fit rows (pipeline/emit/packed.py): sample slot j of source d is row
        epoch * counts[d] + rank[j] of the source's rows, as the concat window is."""
        rows_of, pad = self.packed
        arrays = pk.empty_rows(len(samples), self.seq_len, pad, _doc_dtype(self.doc_base))
        used = np.zeros(len(samples), dtype=np.int64)
        for d in range(len(self.sources)):
            rows = np.flatnonzero(src == d)
            if len(rows) == 0:
                continue
            p = rows_of[d].locate(epoch[rows] * self.plan.counts[d] + self.plan.rank[j[rows]])
            tokens, p.shard, p.start = remote.gather(self.tokens[d], p)
            pk.fill_from_shards(arrays, rows, p, tokens, self.doc_base[d] + p.doc)
            used = np.maximum(used, pk.used_columns(len(samples), rows[p.row], p.col + p.n))
        pk.pad_tails(arrays[2], used)
        return pk.packed_batch(arrays, samples, src)

    def describe(self, doc_id: int) -> tuple[str, str]:
        d = int(np.searchsorted(self.doc_base, doc_id, side="right")) - 1
        i, stream = doc_id - int(self.doc_base[d]), self.streams[d]
        return self.sources[d], stream.doc_ids[stream.shard_of[i]][stream.index_in[i]]


class MixStore:
    """Samples read from a materialised mix (mixes/<name>/ of `gristmill mix`), served in the
    same order as StreamStore serves the mix's schedule (so both emit the same batches). The
    last label of a sample is the first token of the next sample of the same source, its
    stream's continuation, as in StreamStore; IGNORE for the last sample of each source.
    The seed defaults to the mix's own."""

    kind = "mix"

    def __init__(self, folder: Path, seed: int | None, shuffle: bool, open_shard=ShardReader):
        """open_shard: prefix -> reader (a store's range reader for a mix on a URL)."""
        meta = _load_json(folder / MIX_MANIFEST)
        self.seq_len = int(meta["seq_len"])
        self.seed = int(meta["config"]["seed"]) if seed is None else seed
        self.packing = meta["config"].get("packing", "concat")
        self.sources = tuple(meta["target_shares"])
        L, out = self.seq_len, folder.parents[1]
        prefix = out / meta["shard"]["prefix"]
        reader = open_shard(prefix)
        if len(reader) == 0 or (reader.lengths != L).any():
            raise GristmillError(f"{prefix}: every sample of a mix must have {L} tokens")
        n = len(reader)
        flat = reader.tokens()
        self.tokens = flat[: n * L].reshape(n, L) if isinstance(flat, np.ndarray) else flat
        names = reader.sidecar().column("source").to_pylist()
        index = {s: d for d, s in enumerate(self.sources)}
        schedule = np.array([index[s] for s in names], dtype=np.int32)
        is_real = [meta["sources"][s]["origin"] == "real" for s in self.sources]
        guard = meta["guard"]
        self.plan = EpochPlan(
            self.sources,
            is_real,
            schedule,
            guard["window_samples"],
            guard["min_real_fraction"],
            self.seed,
            shuffle,
        )
        # the last label of a sample: the first token of the next sample of its source
        self.next_same = np.full(n, -1, dtype=np.int64)
        for d in range(len(self.sources)):
            mine = np.flatnonzero(schedule == d)
            self.next_same[mine[:-1]] = mine[1:]
        self._open_shard = open_shard
        self._segments(out, prefix, index, n)

    def _segments(self, out: Path, prefix: Path, index: dict, n: int) -> None:
        seg = pq.read_table(f"{prefix}{SEGMENTS}").to_pydict()
        run = mf.load(out)
        self.names = []  # global doc number -> (source, doc_id), numbered as StreamStore does
        counts = []
        for s in index:
            before = len(self.names)
            for p in source_shards(out, run, s):
                names = self._open_shard(p).sidecar().column("doc_id").to_pylist()
                self.names += [(s, name) for name in names]
            counts.append(len(self.names) - before)
        self.doc_base = _doc_base(counts)
        numbers = {}
        for i, key in enumerate(self.names):
            numbers.setdefault(key, i)
        sample = np.array(seg["sample"], dtype=np.int64)
        self.seg_first = np.searchsorted(sample, np.arange(n + 1))
        self.seg_col = np.array(seg["token_start"], dtype=np.int64) - sample * self.seq_len
        self.seg_n = np.array(seg["n_tokens"], dtype=np.int64)
        self.seg_gid = np.array(
            [numbers[k] for k in zip(seg["source"], seg["doc_id"], strict=True)], dtype=np.int64
        )

    def fingerprint(self) -> str:
        return self.plan.fingerprint()

    def _rows(self, samples: np.ndarray, width: int) -> np.ndarray:
        """The first `width` tokens of these samples of the mix."""
        if isinstance(self.tokens, np.ndarray):
            return self.tokens[samples, :width]
        n = np.full(len(samples), width, dtype=np.int64)
        zero = np.zeros(len(samples), dtype=np.int64)
        p = Pieces(zero, zero, n, zero, zero, zero, samples * self.seq_len)
        flat = remote.gather([self.tokens], p)[0][0]
        return flat.reshape(len(samples), width).astype(np.int32)

    def describe(self, doc_id: int) -> tuple[str, str]:
        return self.names[doc_id]

    def fill(self, samples: np.ndarray) -> dict:
        L, plan = self.seq_len, self.plan
        file_j = plan.slots(samples)[1]
        count = self.seg_first[file_j + 1] - self.seg_first[file_j]
        rows = np.repeat(np.arange(len(samples)), count)
        segs = np.arange(int(count.sum())) - np.repeat(
            np.cumsum(count) - count - self.seg_first[file_j], count
        )
        if self.packing == "best_fit":
            arrays = pk.from_rows(
                self._rows(file_j, L),
                rows,
                self.seg_col[segs],
                self.seg_n[segs],
                self.seg_gid[segs],
                _doc_dtype(self.doc_base),
            )
            return pk.packed_batch(arrays, samples, plan.schedule[file_j])
        windows = np.empty((len(samples), L + 1), dtype=np.int32)
        windows[:, :L] = self._rows(file_j, L)
        nxt = self.next_same[file_j]
        windows[:, L] = IGNORE
        windows[nxt >= 0, L] = self._rows(nxt[nxt >= 0], 1)[:, 0]
        pos = np.empty((len(samples), L), dtype=np.int32)
        doc = np.empty((len(samples), L), dtype=_doc_dtype(self.doc_base))
        _fill_boundaries(
            pos, doc, rows, self.seg_col[segs], self.seg_n[segs], self.seg_gid[segs], L
        )
        return _batch(windows, pos, doc, samples, plan.schedule[file_j])


def _plain(tokens):
    return np.asarray(tokens) if isinstance(tokens, np.ndarray) else tokens


def _doc_base(counts: list[int]) -> np.ndarray:
    """Number of the first document of each source (and the total, last)."""
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _doc_dtype(doc_base: np.ndarray) -> type:
    return np.int32 if doc_base[-1] < 2**31 else np.int64


def _batch(windows, pos, doc, samples, src) -> dict:
    L = pos.shape[1]
    return batch_dict(windows[:, :L], windows[:, 1:], pos, doc, samples, src)


def _load_json(path: Path) -> dict:
    try:
        return orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise GristmillError(f"{path}: not found; `gristmill mix` writes it") from None
