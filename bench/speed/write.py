"""`write` on the sample corpus (configs/sample.yaml): what it costs, and what it saves.

1. The sample config with `write` before `tokenize`: the bytes of documents/, write's CPU-s
   per MB of text and its share of the run's CPU (the task step's CPU from the manifest's meter,
   plus `unify`, the run-end pass that gives every file one schema, timed here on the same files
   as the tasks left them), and its rows against the manifest's kept counts.
2. The same stages split over two runs (A: up to `write`; B: A as its source, `tokenize`,
   `pack`): sha256 of every file under tokens/, against one run without `write`.
3. Another tokenizer (a byte-level BPE `tokenizer.json` trained here on the sample corpus):
   tokenize and pack A's documents, against every stage again; CPU-s of each and their ratio.

Each run is `gristmill run` in a new process; a run's CPU-s is its meter's (tasks plus the run
process, from the manifest's `timing.cpu`).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import yaml

from gristmill.stages.fields import named
from gristmill.stages.formats.doctable import DocTableWriter, decode_rows, kind_for_type, unify

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "configs" / "sample.yaml"


def gristmill_run(config: dict, folder: Path, name: str) -> dict:
    out = folder / name
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config | {"output": str(out)}, sort_keys=False))
    cmd = [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(path)]
    subprocess.run(cmd, check=True, capture_output=True)
    return orjson.loads((out / "manifest.json").read_bytes())


def cpu(manifest: dict) -> float:
    c = manifest["timing"]["cpu"]
    return c["tasks_cpu_s"] + c["run_process_cpu_s"]


def tokens_sha(out: Path) -> dict[str, str]:
    files = sorted(p for p in (out / "tokens").rglob("*") if p.is_file())
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files
    }


def step_cpu(manifest: dict, step: str) -> float:
    phases = manifest["timing"]["cpu"]["phases"].values()
    return sum(p["steps"].get(step, {}).get("cpu_s", 0.0) for p in phases)


def unify_cpu(documents: Path, scratch: Path, metadata: dict) -> float:
    """`unify` on the files as each task wrote them: the declared columns (the manifest's
    `documents.metadata`), and the others as the task's own documents gave them."""
    declared = {k: kind_for_type(named(k).type) for k in metadata}
    declared = {k: v for k, v in declared.items() if v is not None}
    files = []
    for f in sorted(documents.glob("*/*.parquet")):
        w = DocTableWriter(scratch / f.parent.name / f.name, 64 << 20, 3, declared)
        for rec in decode_rows(pq.read_table(f)):
            w.add(rec.pop("id"), rec.pop("text"), rec)
        files.append(w.close())
    start = time.process_time()
    unify(files)
    return time.process_time() - start


def bpe_tokenizer(folder: Path) -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    texts = []
    for f in sorted((REPO / "sample_data").rglob("*.jsonl")):
        for line in f.read_bytes().splitlines():
            try:
                texts.append(orjson.loads(line)["text"])
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=4096,
        special_tokens=["<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator([t for t in texts if isinstance(t, str)], trainer)
    tok.save(str(folder / "bpe.json"))
    return str(folder / "bpe.json")


def main() -> None:
    sample = yaml.safe_load(SAMPLE.read_text())
    for src in sample["sources"]:
        src["paths"] = [str((SAMPLE.parent / p).resolve()) for p in src["paths"]]
    stages = sample["stages"]
    i = next(k for k, s in enumerate(stages) if isinstance(s, dict) and "tokenize" in s)
    with tempfile.TemporaryDirectory(prefix="gristmill-write-") as tmp:
        tmp = Path(tmp)
        base = gristmill_run(sample, tmp, "base")
        one = gristmill_run(sample | {"stages": [*stages[:i], "write", *stages[i:]]}, tmp, "one")
        docs = one["documents"]
        text_mb = (
            sum(
                len(r["text"].encode())
                for f in docs["files"]
                for r in pq.read_table(tmp / "one" / f["path"], columns=["text"]).to_pylist()
            )
            / 1e6
        )
        scratch = tmp / "scratch"
        w_task = step_cpu(one, "write")
        w_unify = unify_cpu(tmp / "one" / "documents", scratch, docs["metadata"])
        print("1. sample + write before tokenize")
        print(
            f"   documents/: {sum(f['bytes'] for f in docs['files']):,} bytes in "
            f"{len(docs['files'])} files, {text_mb:.3f} MB of text"
        )
        print(
            f"   rows {docs['docs']}, manifest kept: write {one['stages']['write']['kept']}, "
            f"pii {one['stages']['pii']['kept']}, pack {one['stages']['pack']['kept']}"
        )
        print(
            f"   write CPU-s: tasks {w_task:.3f} + unify {w_unify:.3f} = "
            f"{(w_task + w_unify) / text_mb:.3f} CPU-s per MB; "
            f"{100 * (w_task + w_unify) / cpu(one):.1f}% of the run's {cpu(one):.2f} CPU-s"
        )
        print(f"   tokens/ as without write: {tokens_sha(tmp / 'one') == tokens_sha(tmp / 'base')}")

        a = gristmill_run(sample | {"stages": [*stages[:i], "write"]}, tmp, "a")
        later = {"tasks": sample["tasks"], "workers": sample["workers"]}
        later["sources"] = [{"name": "curated", "run": str(tmp / "a")}]
        b = gristmill_run(later | {"stages": stages[i:]}, tmp, "b")
        print("2. two runs (A: up to write; B: A, tokenize, pack) vs one")
        for path, sha in tokens_sha(tmp / "b").items():
            same = "equal" if tokens_sha(tmp / "base").get(path) == sha else "DIFFERS"
            print(f"   {sha}  {path}  {same}")
        print(f"   CPU-s: A {cpu(a):.2f}, B {cpu(b):.2f}, one run {cpu(base):.2f}")

        bpe = {"tokenize": {"tokenizer": bpe_tokenizer(tmp), "eos": "<eos>"}}
        again = gristmill_run(sample | {"stages": [*stages[:i], bpe, "pack"]}, tmp, "again")
        retok = gristmill_run(later | {"stages": [bpe, "pack"]}, tmp, "retok")
        print("3. another tokenizer (BPE, 4,096 ids)")
        same = tokens_sha(tmp / "again") == tokens_sha(tmp / "retok")
        print(
            f"   every stage again: {cpu(again):.2f} CPU-s; from A's documents: "
            f"{cpu(retok):.2f} CPU-s; ratio {cpu(retok) / cpu(again):.2f}; same shards: {same}"
        )


if __name__ == "__main__":
    main()
