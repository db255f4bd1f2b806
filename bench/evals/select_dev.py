"""`select` and a bucketed mix on the development corpus.

The corpus is scored once in this process (`langid`, then `quality` with `thresholds: off`, so
that `select` is what filters), written as eight jsonl files with `language` and
`quality_score`, and run (`select: {keep_top: 0.2, by: language}`, tokenize, pack) with 1, 2 and
8 tasks: the kept share per language (the manifest's `reports.select`), and sha256 of `tokens/`.
`tokens/` holds a shard per task, so its files differ with `tasks` by construction; the digest
that must not differ is that of the kept documents' ids and token bytes (in id order), and the
files themselves are the same on a rerun with the same `tasks`.

Then `bucket: {quantiles: 5}` and a mix of web buckets and a "synthetic" source (the corpus's
every fifth document, labelled synthetic for the check) under a real-data floor: realised token
shares per bucket against the weights, and the floor per window.

    .venv/bin/python -m bench.evals.select_dev [--limit N] [--data DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

import orjson
import yaml
from datatrove.data import Document

from bench.data.corpus import corpus_path
from gristmill.pipeline.mix.materialize import materialize
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.runner import run
from gristmill.stages.formats.docio import read_records
from gristmill.stages.formats.shards import ShardReader
from gristmill.stages.langid import LangId
from gristmill.stages.quality.stage import Quality, QualityParams

QUIET = {"echo": lambda s: None}
WEIGHTS = {"web/q5": 0.35, "web/q4": 0.25, "web/q3": 0.15, "syn": 0.25}


def scored(path: Path, limit: int | None) -> list[dict]:
    docs = []
    for i, rec in enumerate(read_records(path)):
        if isinstance(rec.get("text"), str) and rec["text"].strip():
            docs.append(Document(text=rec["text"], id=str(rec.get("id", i))))
            if limit and len(docs) >= limit:
                break
    quality = Quality(QualityParams(thresholds="off"))
    out = quality.run(LangId().run(iter(docs)))
    keys = ("language", "quality_score")
    return [{"id": d.id, "text": d.text} | {k: d.metadata[k] for k in keys} for d in out]


def write_files(folder: Path, recs: list[dict], name: str, files: int = 8) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(files):
        lines = b"".join(orjson.dumps(r) + b"\n" for r in recs[k::files])
        (folder / f"{name}-{k}.jsonl").write_bytes(lines)


def source(name: str, folder: str, origin: str = "real") -> dict:
    fields = {"language": "language", "quality_score": "quality_score"}
    return {"name": name, "paths": [folder], "origin": origin, "fields": fields}


def write_config(tmp: Path, name: str, body: dict) -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def digests(out: Path) -> tuple[str, str]:
    """(sha256 of tokens/'s files, sha256 of the kept documents' ids and tokens in id order)."""
    files, docs = hashlib.sha256(), []
    for p in sorted((out / "tokens").rglob("*")):
        if p.is_file():
            files.update(p.relative_to(out).as_posix().encode() + p.read_bytes())
    for idx in sorted((out / "tokens").rglob("*.idx")):
        reader = ShardReader(idx.with_suffix(""))
        ids = reader.sidecar().column("doc_id").to_pylist()
        docs += [(d, reader.doc(i).tobytes()) for i, d in enumerate(ids)]
    content = hashlib.sha256()
    for doc_id, tokens in sorted(docs):
        content.update(doc_id.encode() + b"\0" + tokens)
    return files.hexdigest()[:16], content.hexdigest()[:16]


def select_runs(tmp: Path) -> None:
    stage = {"select": {"score": "quality_score", "keep_top": 0.2, "by": "language"}}
    for k, tasks in enumerate((1, 2, 8, 8)):  # the last: a rerun into a fresh folder
        out = tmp / f"out{k}"
        body = {"output": str(out), "tasks": tasks, "workers": 2}
        body |= {"sources": [source("web", "web")], "stages": [stage, "tokenize", "pack"]}
        t0 = time.perf_counter()
        run(str(write_config(tmp, f"select{k}", body)), **QUIET)
        seconds = time.perf_counter() - t0
        files, content = digests(out)
        print(f"tasks {tasks}: {seconds:.1f} s; tokens/ files {files}, documents {content}")
    report = orjson.loads((tmp / "out0" / "manifest.json").read_bytes())["reports"]["select"]
    groups = sorted(report["groups"].items(), key=lambda kv: -kv[1]["documents"])
    total = sum(g["documents"] for _, g in groups)
    kept = sum(g["cuts"][0]["kept"] for _, g in groups)
    print(f"kept {kept} of {total} ({kept / total:.4f}) in {len(groups)} languages")
    print(f"{'language':>8} {'docs':>6} {'kept':>5} {'share':>7} {'cut score':>9}")
    for lang, g in groups[:12]:
        cut = g["cuts"][0]
        score = "-" if cut["score"] is None else f"{cut['score']:.4f}"
        share = cut["kept"] / g["documents"]
        print(f"{lang:>8} {g['documents']:6d} {cut['kept']:5d} {share:7.4f} {score:>9}")
    off = [abs(g["cuts"][0]["kept"] - 0.2 * g["documents"]) for _, g in groups]
    print(f"largest |kept - 0.2 x docs| over all languages: {max(off):.2f} documents")


def bucket_mix(tmp: Path) -> None:
    out = tmp / "outmix"
    body = {"output": str(out), "tasks": 2, "workers": 2}
    body["sources"] = [source("web", "web"), source("syn", "syn", "synthetic")]
    body["stages"] = [{"bucket": {"score": "quality_score", "quantiles": 5}}, "tokenize", "pack"]
    guard = {"min_real_fraction": 0.7, "window_tokens": 64 * 1024}
    body["mix"] = {"seq_len": 1024, "weights": WEIGHTS, "guard": guard}
    path = write_config(tmp, "mix", body)
    run(str(path), **QUIET)
    m = materialize(RunPlan.load(path, keyed=False), "default", **QUIET)
    print(f"mix: {m['samples']} samples of 1024 tokens, {m['guard']['windows']} windows of 64")
    print(f"{'entry':>7} {'target':>7} {'realised':>8} {'epochs':>7}")
    for entry, share in WEIGHTS.items():
        got, epochs = m["achieved_shares"][entry], m["sources"][entry]["epochs"]
        print(f"{entry:>7} {share:7.4f} {got:8.4f} {epochs:7.3f}")
    g = m["guard"]
    print(f"floor 0.7: min real fraction over windows {g['min_real_fraction_seen']}, "
          f"all windows ok: {g['all_ok']}; largest window deviation "
          f"{m['max_window_deviation_samples']} samples")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None, help="the first N documents only")
    ap.add_argument("--data", type=Path, default=None)
    a = ap.parse_args()
    path = corpus_path(a.data)
    if path is None:
        raise SystemExit("no development corpus (see bench/data/corpus.py)")
    t0 = time.perf_counter()
    recs = scored(path, a.limit)
    print(f"{len(recs)} documents scored by langid and quality in {time.perf_counter() - t0:.0f} s")
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        write_files(tmp / "web", recs, "web")
        select_runs(tmp)
        real = [r for i, r in enumerate(recs) if i % 5]
        write_files(tmp / "web", real, "web")
        write_files(tmp / "syn", [r for i, r in enumerate(recs) if not i % 5], "syn")
        bucket_mix(tmp)


if __name__ == "__main__":
    main()
