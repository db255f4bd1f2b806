"""`gristmill mix CONFIG`: a mix made from a finished run's `tokens/<source>/` shards, without
re-tokenising, at `mixes/<name>/`:

    00000.bin/.idx/.docs.parquet   seq_len-token samples (Megatron MMIDIDX, one sequence each),
                                   in the blend schedule's order; the sidecar row of a sample
                                   names the source, origin and the document it starts in
    00000.segments.parquet         every (sample, document) stretch: the token -> document map
    mix_manifest.json              target vs achieved shares overall and per window, the guard's
                                   result for every window, repeats per source, file hashes

Samples are consecutive seq_len-token cuts of each source's stream (pipeline/mix/streams.py:
documents shuffled per epoch by the mix's seed, EOS between documents); the schedule
(pipeline/mix/schedule.py) decides which source each next sample comes from.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from gristmill.pipeline.mix import rehydrate as rh
from gristmill.pipeline.mix.packing import PackedRows, PackingTally, pad_token
from gristmill.pipeline.mix.schedule import real_needed, window_shares
from gristmill.pipeline.mix.streams import Segment, SourceStream
from gristmill.pipeline.mix.weights import blend_plan, planned_shares
from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.layout import SEGMENTS
from gristmill.pipeline.output.mix_table import packing_line
from gristmill.pipeline.run.mix_config import ResolvedMix, is_topic
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import atomic_path, write_bytes
from gristmill.stages.formats.shards import ShardWriter

MIX_MANIFEST = "mix_manifest.json"
SEGMENT_COLUMNS = ("sample", "doc_id", "source", "origin", "token_start", "n_tokens", "doc_offset")


def source_shards(out: Path, manifest: mf.Manifest, source: str) -> list[Path]:
    """The shards of a source (of `web` for a mix's `web/q5`: its bucket)."""
    source = source.split("/", 1)[0]
    prefixes = [out / s.prefix for s in manifest.shards_of(source)]
    if not prefixes:
        raise GristmillError(f"mix: source {source!r} has no token shards in {out / 'tokens'}")
    return prefixes


def open_streams(
    out: Path, manifest: mf.Manifest, mix: ResolvedMix, keep=None, open_shard=None
) -> list[SourceStream]:
    """Every source's stream (only shards in `keep`, if given), rehydrated if the mix says so
    (pipeline/mix/rehydrate.py); open_shard: prefix -> reader (a store's, for the emitter)."""
    hyd = mix.config.rehydrate
    sizes = rh.cluster_sizes(out, hyd.stages) if hyd else {}
    streams = []
    for i, source in enumerate(mix.sources):
        prefixes = source_shards(out, manifest, source)
        if keep is not None:
            prefixes = [p for p in prefixes if p.relative_to(out).as_posix() in keep]
            if not prefixes:
                raise GristmillError(f"source {source!r} has no shard left to emit from")
        opened = [open_shard(p) for p in prefixes] if open_shard else prefixes
        stream = SourceStream(opened, mix.config.seed, i)
        if "/" in source:
            stream.only(in_bucket(stream, source))
        if hyd and (hyd.sources is None or source.split("/", 1)[0] in hyd.sources):
            ids = [d for shard in stream.doc_ids for d in shard]
            stream.rehydrate(rh.repeats_of(ids, sizes, hyd.repeats))
        streams.append(stream)
    return streams


def in_bucket(stream: SourceStream, entry: str) -> np.ndarray:
    """Which documents of the stream are in the part `entry` names, from the shards' sidecars:
    a quality bucket (`web/q5`: the `bucket` column that `pack` writes after the `bucket`
    stage) or a topic cluster (`web/c3`: the `topic` column, after `semantic_dedup`)."""
    source, part = entry.split("/", 1)
    column, what = ("topic", "topic cluster") if is_topic(part) else ("bucket", "bucket")
    found = []
    for reader in stream.readers:
        table = reader.sidecar()
        if column not in table.column_names and column == "topic":
            # the config load made sure semantic_dedup ran: no document here had a letter
            found += [None] * table.num_rows
            continue
        if column not in table.column_names:
            raise GristmillError(
                f"mix weights {entry!r}: {reader.sidecar_path} has no {column} column; "
                "put the `bucket` stage in the run (docs/stages/bucket.md)"
            )
        found += table.column(column).to_pylist()
    keep = np.array([b == part for b in found], dtype=bool)
    if not keep.any():
        known = sorted({b for b in found if b is not None})
        raise GristmillError(
            f"mix weights {entry!r}: no document of source {source!r} is in {what} {part!r}; "
            f"its {what}s are: {', '.join(known)}"
        )
    return keep


def max_repeats(stream: SourceStream) -> int:
    return 1 if stream.repeats is None else int(stream.repeats.max())


def packed_rows(mix: ResolvedMix, streams: list[SourceStream]) -> list[PackedRows] | None:
    """Every source's best-fit rows (`packing: best_fit`), or None (`concat`)."""
    if mix.config.packing != "best_fit":
        return None
    return [PackedRows(s, mix.config.seq_len, mix.config.packing_window) for s in streams]


def n_samples(mix: ResolvedMix, streams: list[SourceStream], packed=None) -> int:
    """The mix's size: `tokens` if given (samples x seq_len, padding included), else as many
    samples as fit before any document of a source is seen more than its `max_epochs` times
    (default once; a rehydrated document is seen its repeats times per pass). A source's
    samples per pass: its tokens / seq_len (`concat`), its rows of the first pass (`best_fit`)."""
    seq = mix.config.seq_len
    if mix.config.tokens is not None:
        return math.ceil(mix.config.tokens / seq)
    fits = []
    for d, (src, w, stream) in enumerate(zip(mix.sources, mix.weights, streams, strict=True)):
        if w > 0:
            epochs = mix.config.max_epochs.get(src, 1.0) / max_repeats(stream)
            per_pass = packed[d].rows_per_pass if packed else stream.n_tokens / seq
            fits.append(math.floor(per_pass * epochs / w))
    return max(min(fits), 0)


def _packed_row(rows: PackedRows, pad: int) -> tuple[np.ndarray, list[Segment]]:
    """The next best-fit row of a source: its tokens, padded to seq_len, and its pieces."""
    p, stream = rows.take(), rows.stream
    out = np.full(rows.seq_len, pad, dtype=np.int64)
    segments = []
    for c, n, doc, off, shard, s in zip(
        *(a.tolist() for a in (p.col, p.n, p.doc, p.doc_offset, p.shard, p.start)), strict=True
    ):
        out[c : c + n] = stream.tokens[shard][s : s + n]
        name = stream.doc_ids[shard][stream.index_in[doc]]
        segments.append(Segment(name, n, off, int(stream.lengths[doc])))
    return out, segments


def materialize(plan: RunPlan, name: str, echo=print) -> dict:
    if name not in plan.mixes:
        known = ", ".join(plan.mixes) or "none in this config"
        raise GristmillError(f"mix {name!r} is not in {plan.path}; mixes: {known}")
    mix, out = plan.mixes[name], plan.out
    run_manifest = mf.load_tokenized(out)
    if mix.capped:
        echo(f"mix {name}: guard capped synthetic shares {mix.capped} (configured -> used)")
    for k, p in enumerate(mix.phases):
        if p.capped:
            echo(f"mix {name}: guard capped phase {k}'s synthetic shares {p.capped}")
    seq = mix.config.seq_len
    streams = open_streams(out, run_manifest, mix)
    packed = packed_rows(mix, streams)
    n = n_samples(mix, streams, packed)
    if n == 0:
        raise GristmillError(f"mix {name}: not one sample of {seq} tokens fits the sources")
    schedule = blend_plan(mix, n)

    folder = out / "mixes" / name
    folder.mkdir(parents=True, exist_ok=True)
    prefix = folder / "00000"
    origins = ["real" if r else "synthetic" for r in mix.is_real]
    vocab = run_manifest.tokenizer.vocab_size
    segments_rows = []  # one per (sample, document) stretch: SEGMENT_COLUMNS
    pad = pad_token(run_manifest.tokenizer.dump())  # its JSON: `pad_id` if recorded
    tally = PackingTally(mix.config.packing, seq, mix.config.packing_window, pad)
    with ShardWriter(prefix, vocab) as writer:
        for i, d in enumerate(schedule.tolist()):
            if packed:
                tokens, segments = _packed_row(packed[d], pad[0])
            else:
                tokens, segments = streams[d].take(seq)
            tally.add(segments)
            start = writer.add(tokens, segments[0].doc_id, mix.sources[d], origins[d])
            for seg in segments:
                segments_rows.append(
                    (i, seg.doc_id, mix.sources[d], origins[d], start, seg.n_tokens, seg.doc_offset)
                )
                start += seg.n_tokens
    _write_segments(Path(f"{prefix}{SEGMENTS}"), segments_rows)

    manifest = _mix_manifest(mix, schedule, streams, run_manifest, out, prefix)
    manifest["packing"] = tally.entry()
    path = folder / MIX_MANIFEST
    write_bytes(
        path, orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n"
    )
    url = plan.url  # published there: named as the user gave it
    shown = f"{url.rstrip('/')}/mixes/{name}/{MIX_MANIFEST}" if url else path
    _summary(name, manifest, shown, echo)
    return manifest


def _write_segments(path: Path, rows: list[tuple]) -> None:
    table = pa.table(dict(zip(SEGMENT_COLUMNS, map(list, zip(*rows, strict=True)), strict=True)))
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", store_schema=False)


def _window_entries(mix, win: np.ndarray, planned: np.ndarray) -> list[dict]:
    """Per guard window: its samples, counts per source, real fraction and guard verdict."""
    floor = mix.config.guard.min_real_fraction
    real_cols = [d for d in range(len(mix.sources)) if mix.is_real[d]]
    per_window = []
    for row, plan in zip(win.tolist(), planned.tolist(), strict=True):
        length = sum(row)
        real = sum(row[d] for d in real_cols)
        entry = {
            "samples": length,
            "counts": row,
            "real_fraction": round(real / length, 6),
            "guard_ok": real >= real_needed(length, floor),
        }
        if mix.phases:
            entry["planned_shares"] = [round(x, 6) for x in plan]
        per_window.append(entry)
    return per_window


def _source_entries(mix, streams, counts: list[int]) -> dict[str, dict]:
    """Per source: samples and tokens taken, epochs over its tokens, rehydration counts."""
    seq = mix.config.seq_len
    sources = {}
    for d, (src, stream) in enumerate(zip(mix.sources, streams, strict=True)):
        limit = mix.config.max_epochs.get(src)
        seen = stream.epochs * max_repeats(stream)  # times the most repeated document is seen
        sources[src] = {
            "origin": "real" if mix.is_real[d] else "synthetic",
            "samples": counts[d],
            "tokens": counts[d] * seq,
            "source_tokens": stream.n_tokens,
            "epochs": round(stream.epochs, 6),
            "max_epochs": limit,
            "over_max_epochs": limit is not None and seen > limit + 1e-9,
        }
        if stream.rehydrated:
            sources[src]["rehydration"] = rh.counts(stream.repeats, stream.lengths)
            sources[src]["max_document_repeats"] = round(seen, 6)
    return sources


def _mix_manifest(mix, schedule, streams, run_manifest, out: Path, prefix: Path) -> dict:
    k, seq = len(mix.sources), mix.config.seq_len
    win = window_shares(schedule, k, mix.window_samples)
    floor = mix.config.guard.min_real_fraction
    planned = planned_shares(mix, len(schedule))
    per_window = _window_entries(mix, win, planned)
    counts = np.bincount(schedule, minlength=k).tolist()
    max_dev = float(np.abs(win - planned * win.sum(1)[:, None]).max()) if len(win) else 0.0
    sources = _source_entries(mix, streams, counts)
    files = {ext: mf.file_entry(Path(f"{prefix}{ext}")) for ext in (*mf.SHARD_FILES, SEGMENTS)}
    return {
        "mix": mix.name,
        "run_key": run_manifest.run_key,
        "config": mix.config.model_dump(mode="json"),
        "seq_len": seq,
        "samples": len(schedule),
        "tokens": len(schedule) * seq,
        "target_shares": dict(zip(mix.sources, [round(w, 6) for w in mix.weights], strict=True)),
        "achieved_shares": {
            s: round(c / len(schedule), 6) for s, c in zip(mix.sources, counts, strict=True)
        },
        "capped": mix.capped,
        **({"schedule": _phases(mix)} if mix.phases else {}),
        "guard": {
            "min_real_fraction": floor,
            "window_samples": mix.window_samples,
            "windows": len(per_window),
            "all_ok": all(w["guard_ok"] for w in per_window),
            "min_real_fraction_seen": min(w["real_fraction"] for w in per_window),
        },
        "max_window_deviation_samples": round(max_dev, 6),
        "windows": per_window,
        "sources": sources,
        "shard": {"prefix": prefix.relative_to(out).as_posix(), "files": files},
    }


def _phases(mix: ResolvedMix) -> list[dict]:
    """The schedule as used: each phase's span of the mix's tokens, ramp and shares."""
    return [
        {
            "start": round(p.start, 6),
            "until": round(p.until, 6),
            "ramp": round(p.ramp, 6),
            "shares": dict(zip(mix.sources, [round(w, 6) for w in p.weights], strict=True)),
            "capped": p.capped,
        }
        for p in mix.phases
    ]


def _summary(name: str, m: dict, path, echo) -> None:
    shares = ", ".join(
        f"{s} {m['achieved_shares'][s]:.4f} (target {t:.4f})" for s, t in m["target_shares"].items()
    )
    echo(f"mix {name}: {m['samples']:,} samples x {m['seq_len']} tokens; {shares}")
    g = m["guard"]
    echo(
        f"guard: {g['windows']} windows, real fraction >= {g['min_real_fraction_seen']:.4f} "
        f"(floor {g['min_real_fraction']}): {'ok' if g['all_ok'] else 'VIOLATED'}"
    )
    for src, s in m["sources"].items():
        seen = s.get("max_document_repeats", s["epochs"])
        if s["over_max_epochs"]:
            echo(f"warning: {src} repeated {seen:.2f} times (max_epochs {s['max_epochs']})")
        elif s["max_epochs"] is None and seen > 1 + 1e-9:  # repeats no limit was set for
            echo(f"note: {src} repeated {seen:.2f} times (set max_epochs.{src} to bound it)")
        if "rehydration" in s:
            r = s["rehydration"]
            echo(
                f"rehydrated {src}: {r['documents_repeated']:,} documents repeated "
                f"{r['documents_by_repeats']}, {r['source_tokens_before']:,} -> "
                f"{r['source_tokens_after']:,} tokens per pass"
            )
    echo(packing_line(m["packing"]))
    echo(f"mix manifest: {path}")
