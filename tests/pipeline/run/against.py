"""What the `dedup_against` tests share: a run of a few files through the dedup stages, what it
kept and rejected, and the fuzzy corpus (the sample's web source and near duplicates in seven
languages, split into the half run A reads and the rest)."""

from __future__ import annotations

import glob
import random
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import yaml

from gristmill.stages.formats.docio import open_binary, read_records
from tests.conftest import run_quietly, write_jsonl
from tests.scripts_text import ALPHABETS, text_in

REPO = Path(__file__).resolve().parents[3]
WEB = REPO / "sample_data" / "web"
HALF = [str(WEB / "part-00000.jsonl"), str(WEB / "part-00001.jsonl")]
REST = [str(p) for p in sorted(WEB.glob("part-*")) if str(p) not in HALF]
EXACT = ["exact_dedup", {"tokenize": {"tokenizer": "gpt2"}}, "pack"]
FUZZY = ["exact_dedup", "minhash_dedup", {"tokenize": {"tokenizer": "gpt2"}}, "pack"]
SIMHASH = ["exact_dedup", "simhash_dedup", *FUZZY[2:]]


def run(tmp: Path, name: str, paths: list[str], stages=EXACT, output=None, **extra) -> Path:
    out = output or tmp / name
    data = {"output": str(out), "tasks": 2, "workers": 1, "stages": stages, **extra}
    # one source: ids grow in file order, so in one run over everything A's copy of a text
    # survives, as it does in A (a synthetic copy in A would lose to a real one in the rest)
    data["sources"] = [{"name": "web", "paths": paths}]
    cfg = tmp / f"{name}.yaml"
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    run_quietly(cfg)
    return out


def kept(out: Path) -> set[str]:
    return {
        r["doc_id"]
        for f in glob.glob(str(out / "tokens" / "*" / "*.docs.parquet"))
        for r in pq.read_table(f).to_pylist()
    }


def rejects(out: Path, stage: str) -> dict[str, dict]:
    return {
        r["id"]: r
        for f in glob.glob(str(out / "rejected" / stage / "*.jsonl.zst"))
        for r in read_records(f)
    }


def earlier(out: Path, stage: str) -> dict[str, dict]:
    """The documents `stage` dropped for an earlier run."""
    return {i: r for i, r in rejects(out, stage).items() if r["reason"] == "in_earlier_run"}


def texts(paths: list[str]) -> dict[str, str]:
    """id -> text of every readable record with an id and a text (the sample's files have ids;
    part-broken's bad lines are passed over)."""
    out = {}
    for p in paths:
        if p.endswith(".parquet"):
            recs = pq.read_table(p).to_pylist()
        else:
            with open_binary(p) as fh:
                recs = [_json(line) for line in fh]
        for r in recs:
            if isinstance(r, dict) and isinstance(r.get("text"), str) and "id" in r:
                out[str(r["id"])] = r["text"]
    return out


def _json(line: bytes):
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


# ---- near duplicates in seven languages: letters of each script, words in the spaced ones ----


def near_copy(text: str, lang: str, rng: random.Random, edits: int = 3) -> str:
    """`edits` units (letters; words in spaced scripts) replaced, far apart: Jaccard of word or
    letter 5-grams about 0.9 (each edit changes 5 of about 300 shingles)."""
    lo, hi, spaced = ALPHABETS[lang]
    units = text.split(" ") if spaced else list(text)
    for k in range(edits):
        i = (k + 1) * len(units) // (edits + 1) + rng.randint(-5, 5)
        units[i] = chr(rng.randint(lo, hi)) * (3 if spaced else 1)
    return (" " if spaced else "").join(units)


def multilingual(folder: Path) -> tuple[str, str]:
    """Two files, A's half and the rest. Per language `l`:

    - l-old: in A's half; l-old-near (a near copy) in the rest: B drops it for A;
    - l-pair, l-pair-near: a near pair in A's half, A keeps one; l-pair-far, a third near
      copy, in the rest: B drops it for A;
    - l-new, l-new-near: a near pair in the rest only: B keeps one;
    - l-same: an exact copy of l-old in the rest: B's exact_dedup drops it for A;
    - l-other-a in A's half, l-other-b in the rest: unlike anything, kept.
    """
    rng = random.Random(11)
    half, rest = [], []
    for lang in ALPHABETS:
        old, pair, new = (text_in(lang, rng) for _ in range(3))
        half += [
            {"id": f"{lang}-old", "text": old},
            {"id": f"{lang}-pair", "text": pair},
            {"id": f"{lang}-pair-near", "text": near_copy(pair, lang, rng)},
            {"id": f"{lang}-other-a", "text": text_in(lang, rng)},
        ]
        rest += [
            {"id": f"{lang}-old-near", "text": near_copy(old, lang, rng)},
            {"id": f"{lang}-pair-far", "text": near_copy(pair, lang, rng)},
            {"id": f"{lang}-new", "text": new},
            {"id": f"{lang}-new-near", "text": near_copy(new, lang, rng)},
            {"id": f"{lang}-same", "text": old},
            {"id": f"{lang}-other-b", "text": text_in(lang, rng)},
        ]
    a, b = folder / "ml-a.jsonl", folder / "ml-b.jsonl"
    write_jsonl(a, half)
    write_jsonl(b, rest)
    return str(a), str(b)
