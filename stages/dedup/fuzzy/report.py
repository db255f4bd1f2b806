"""The report of a fuzzy dedup (one task, after the clusters phase), under its stage's name
(`<work>/reports/<stage>.json`, the manifest's `reports`): every part's share merged
into the largest clusters and the documents removed per source. A source losing more
than `max_source_loss` of its documents is a warning, or an error with `strict`.

With `dedup_against`, the documents the map dropped for an earlier run (`in_earlier_run`) are
counted apart, per source and per earlier run, as the map's files are read; they are not in
`removed` nor in the loss warning (they are what the run was asked to drop), and a source's
`share_removed` is of its other documents.

Memory: `top_clusters` clusters per part and a count per source and per earlier run.
"""

from __future__ import annotations

from collections import Counter

import orjson
from datatrove.data import DocumentsPipeline

from gristmill.stages.dedup.fuzzy.cluster import publish_report
from gristmill.stages.dedup.fuzzy.method import FuzzyStep
from gristmill.stages.formats.docio import read_records


class Report(FuzzyStep):
    phase, per = "report", "one"

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        files = self.files
        stage = self.fuzzy.name
        shares = [_load(stage, files.part_report(j), "clusters") for j in range(self.parts)]
        per_source: Counter = Counter()
        for t in range(self.ctx.tasks):
            per_source.update(_load(stage, files.docs(t, "sources.json"), "map"))
        earlier = None
        if self.ctx.earlier:  # [index, earlier run, earlier id, value, source] per document
            earlier = (Counter(), Counter())
            for t in range(self.ctx.tasks):
                for r in read_records(_existing(stage, files.docs(t, "earlier.jsonl"), "map")):
                    earlier[0][r[4]] += 1
                    earlier[1][r[1]] += 1
        report = self.report(shares, per_source, earlier)
        publish_report(files.report(), report, self.params.strict, self.fuzzy.name)
        yield from ()

    def report(
        self,
        shares: list[dict],
        per_source: Counter,
        earlier: tuple[Counter, Counter] | None = None,
    ) -> dict:
        """`earlier`: (documents dropped for an earlier run per source, and per earlier run).
        A source's `share_removed` (and its loss warning) is of the documents this run
        deduplicated among themselves: its documents less those dropped for an earlier run."""
        p = self.params
        removed_by_source: Counter = Counter()
        for share in shares:
            removed_by_source.update(share["removed_by_source"])
        candidates = [c for share in shares for c in share["largest"]]
        largest = sorted(candidates, key=lambda c: (-c["size"], c["key"], c["gid"]))
        largest = largest[: p.top_clusters]
        self.stat_update("largest_cluster", value=largest[0]["size"] if largest else 0)
        sources, warnings = self._sources(per_source, removed_by_source, earlier)
        self.stat_update("sources_over_loss_limit", value=len(warnings))
        n_clusters = sum(share["clusters"] for share in shares)
        n_removed = sum(removed_by_source.values())
        summary = f"{self.fuzzy.name}: {n_clusters:,} clusters, {n_removed:,} documents removed"
        if largest:
            top = largest[0]
            summary += f"; largest cluster {top['size']:,} documents ({top['cluster_id']})"
        more: dict = {}
        if earlier is not None:
            tail, more["in_earlier_run"] = _earlier_summary(earlier)
            summary += tail
        return {
            "summary": [summary],
            "stage": self.fuzzy.name,
            **p.lsh_report(),
            "clusters": n_clusters,
            "clustered_docs": sum(share["clustered_docs"] for share in shares),
            "removed": n_removed,
            "largest_clusters": [
                {
                    "cluster_id": c["cluster_id"],
                    "size": c["size"],
                    "removed": c["removed"],
                    "sources": dict(sorted(c["sources"].items(), key=lambda kv: str(kv[0]))),
                }
                for c in largest
            ],
            "sources": sources,
            **more,
            "warnings": warnings,
        }

    def _sources(self, per_source: Counter, removed: Counter, earlier) -> tuple[dict, list]:
        """Per source: its documents, those removed and their share (of the documents this
        run deduplicated among themselves), and those dropped for an earlier run; and the
        loss warnings."""
        p, sources, warnings = self.params, {}, []
        for src in sorted(per_source, key=str):
            before = earlier[0][src] if earlier is not None else 0
            share = removed[src] / max(1, per_source[src] - before)
            sources[str(src)] = {
                "docs": per_source[src],
                "removed": removed[src],
                "share_removed": round(share, 6),
            } | ({"in_earlier_run": before} if earlier is not None else {})
            if share > p.max_source_loss:
                warnings.append(
                    f"{self.fuzzy.name}: source {src!r} loses {removed[src]} of "
                    f"{per_source[src] - before} documents ({share:.1%}), over "
                    f"max_source_loss {p.max_source_loss:.0%}"
                )
        return sources, warnings


def _earlier_summary(earlier: tuple[Counter, Counter]) -> tuple[str, dict]:
    """The summary's end and the report's part on the documents dropped for earlier runs."""
    n = sum(earlier[1].values())
    tail = f"; {n:,} dropped as near duplicates of earlier runs' documents"
    return tail, {"docs": n, "by_run": dict(sorted(earlier[1].items()))}


def _existing(stage: str, path, what: str):
    """`path`, or an error naming the stage (`minhash_dedup`, `simhash_dedup`) it is of."""
    if not path.exists():
        raise RuntimeError(f"{stage}: {what} output missing: {path}")
    return path


def _load(stage: str, path, what: str):
    return orjson.loads(_existing(stage, path, what).read_bytes())
