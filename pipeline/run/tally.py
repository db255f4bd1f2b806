"""What the report counts while a run runs: the metadata of every kept document, tallied per task.

A `_tally` step sits right before `pack` in the last phase, where every kept document carries all
the metadata the stages wrote. It counts the shared keys of `stages/fields.py` the stages declare
writing (`language`, `quality_score`, `pii_counts`, `cluster_size`, `n_tokens`, `source`,
`origin`); a key no stage of the run writes is absent (a language counts as `unknown`). Each
task writes one small JSON file, `<work>/tally/<task>.json`, of bounded size (a fixed number of
histogram bins, one entry per language, source, PII type and cluster size, and the
`TOP_CLUSTERS` largest clusters), and `merge` adds them up for the report.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.pipeline.run.observe import RunObserver
from gristmill.pipeline.run.phases import BEFORE_END, Steps
from gristmill.stages import fields as md
from gristmill.stages.formats.atomic import write_bytes

TALLY = "tally"
BINS = 20  # quality_score histogram bins over [0, 1]
TOP_CLUSTERS = 20


def empty() -> dict:
    return {
        "docs": 0,
        "tokens": 0,
        "bytes": 0,
        "languages": {},  # language -> [docs, tokens]
        "quality": {},  # language -> BINS counts of quality_score
        "pii": {},  # PII type -> count
        "cluster_sizes": {},  # size (str, JSON keys) -> clusters of that size kept once
        "largest": [],  # [size, doc id] of the largest near-duplicate clusters
        "sources": {},  # source -> origin -> [docs, tokens]
    }


def add(t: dict, doc_id: str, text: str, meta: dict) -> None:
    tokens = int(meta.get(md.N_TOKENS.name) or 0)
    t["docs"] += 1
    t["tokens"] += tokens
    t["bytes"] += len(text.encode("utf-8", "surrogatepass"))
    lang = str(meta.get(md.LANGUAGE.name) or "unknown")
    row = t["languages"].setdefault(lang, [0, 0])
    row[0] += 1
    row[1] += tokens
    score = meta.get(md.QUALITY_SCORE.name)
    if isinstance(score, int | float):
        b = min(max(int(score * BINS), 0), BINS - 1)
        t["quality"].setdefault(lang, [0] * BINS)[b] += 1
    for kind, n in (meta.get(md.PII_COUNTS.name) or {}).items():
        t["pii"][kind] = t["pii"].get(kind, 0) + int(n)
    size = meta.get(md.CLUSTER_SIZE.name)
    if isinstance(size, int) and size > 1:  # the one survivor of a near-duplicate cluster
        t["cluster_sizes"][str(size)] = t["cluster_sizes"].get(str(size), 0) + 1
        t["largest"] = sorted([*t["largest"], [size, doc_id]], key=lambda x: (-x[0], x[1]))
        del t["largest"][TOP_CLUSTERS:]
    src = t["sources"].setdefault(str(meta.get(md.SOURCE.name)), {})
    cell = src.setdefault(str(meta.get(md.ORIGIN.name)), [0, 0])
    cell[0] += 1
    cell[1] += tokens


def merge(tallies) -> dict:
    out = empty()
    for t in tallies:
        for k in ("docs", "tokens", "bytes"):
            out[k] += t[k]
        for lang, (d, n) in t["languages"].items():
            row = out["languages"].setdefault(lang, [0, 0])
            row[0], row[1] = row[0] + d, row[1] + n
        for lang, bins in t["quality"].items():
            acc = out["quality"].setdefault(lang, [0] * BINS)
            out["quality"][lang] = [a + b for a, b in zip(acc, bins, strict=True)]
        for k, n in t["pii"].items():
            out["pii"][k] = out["pii"].get(k, 0) + n
        for k, n in t["cluster_sizes"].items():
            out["cluster_sizes"][k] = out["cluster_sizes"].get(k, 0) + n
        out["largest"] = sorted(out["largest"] + t["largest"], key=lambda x: (-x[0], x[1]))
        del out["largest"][TOP_CLUSTERS:]
        for src, origins in t["sources"].items():
            for origin, (d, n) in origins.items():
                cell = out["sources"].setdefault(src, {}).setdefault(origin, [0, 0])
                cell[0], cell[1] = cell[0] + d, cell[1] + n
    return out


def load(work: Path) -> dict | None:
    files = sorted((work / TALLY).glob("*.json"))
    if not files:
        return None
    return merge(orjson.loads(f.read_bytes()) for f in files)


class TallyKept(PipelineStep):
    """Pass-through step that tallies the kept documents' metadata (see the module doc)."""

    name, type = "_tally", "work"

    def __init__(self, work: Path):
        super().__init__()
        self.folder = work / TALLY

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        t = empty()
        for doc in data or ():
            add(t, doc.id, doc.text, doc.metadata)
            yield doc
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{rank:05d}.json"
        write_bytes(path, orjson.dumps(t))


class Tally(RunObserver):
    """Puts the `_tally` step right before `pack` (or `write`), in the last phase."""

    steps = (Steps(BEFORE_END, lambda phase, work: [TallyKept(work)]),)
