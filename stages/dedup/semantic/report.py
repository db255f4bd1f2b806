"""The report of `semantic_dedup` (one task, after the pairwise pass), at
`<work>/reports/semantic_dedup.json` (the manifest's `reports`; report.html shows its summary
lines): clusters, documents removed per source, the documents without a vector, the clusters
split for memory, the largest clusters with examples (a kept document and one it removed, their
excerpts and similarity). A source losing more than `max_source_loss` of its documents is a
warning, or an error with `strict`. With `dedup_against`, the documents dropped for an earlier
run are counted apart (per source and per earlier run), outside `removed` and the warning."""

from __future__ import annotations

from collections import Counter

import orjson
from datatrove.data import DocumentsPipeline

from gristmill.stages.dedup.fuzzy.cluster import publish_report
from gristmill.stages.dedup.semantic.train import SemanticStep

SHOWN = 3  # clusters whose examples the summary lines show


def _load(stage: str, path, what: str):
    if not path.exists():
        raise RuntimeError(f"{stage}: {what} output missing: {path}")
    return orjson.loads(path.read_bytes())


class Report(SemanticStep):
    phase, per = "report", "one"

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        shares = [_load(self.stage, self.files.part_report(j), "pairs") for j in range(self.parts)]
        docs, no_vector = Counter(), Counter()
        for t in range(self.ctx.tasks):
            got = _load(self.stage, self.files.docs(t, "sources.json"), "map")
            docs.update(got["docs"])
            no_vector.update(got["no_vector"])
        report = self.report(shares, docs, no_vector)
        publish_report(self.files.report(), report, self.params.strict, self.stage)
        yield from ()

    def report(self, shares: list[dict], docs: Counter, no_vector: Counter) -> dict:
        p = self.params
        removed, before, by_run = Counter(), Counter(), Counter()
        for s in shares:
            removed.update(s["removed_by_source"])
            before.update(s.get("earlier_by_source", {}))  # dropped for an earlier run
            by_run.update(s.get("earlier_by_run", {}))
        earlier = bool(self.ctx.earlier)
        largest = sorted(
            (c for s in shares for c in s["largest"]), key=lambda c: (-c["size"], c["c"])
        )[: p.top_clusters]
        splits = sorted((x for s in shares for x in s["splits"]), key=lambda x: x["cluster_id"])
        sources, warnings = {}, []
        for src in sorted(docs, key=str):
            own = docs[src] - before[src]  # the documents deduplicated among themselves
            share = removed[src] / max(1, own)
            sources[str(src)] = {
                "docs": docs[src],
                "no_vector": no_vector[src],
                "removed": removed[src],
                "share_removed": round(share, 6),
            } | ({"in_earlier_run": before[src]} if earlier else {})
            if share > p.max_source_loss:
                warnings.append(
                    f"{self.stage}: source {src!r} loses {removed[src]} of {own} "
                    f"documents ({share:.1%}), over max_source_loss {p.max_source_loss:.0%}"
                )
        n_clusters, n_removed = sum(s["clusters"] for s in shares), sum(removed.values())
        summary = [
            f"{self.stage}: {n_clusters:,} clusters, {n_removed:,} documents removed at cosine "
            f">= {p.threshold}; {sum(no_vector.values()):,} documents without a letter or digit "
            "not embedded (kept)"
            + (
                f"; {sum(by_run.values()):,} dropped as semantic duplicates of earlier runs' "
                "documents"
                if earlier
                else ""
            )
        ]
        if splits:
            summary.append(
                f"{len(splits)} clusters over max_cluster {p.max_cluster:,} split for memory: "
                + ", ".join(
                    f"{x['cluster_id']} ({x['size']:,} -> {len(x['parts'])})" for x in splits
                )
            )
        for c in largest[:SHOWN]:
            for ex in c["examples"][:1]:
                summary.append(
                    f"cluster {c['cluster_id']} ({c['size']:,} documents, {c['removed']:,} "
                    f"removed): kept {ex['kept'][0]} {ex['kept'][1][:80]!r}; removed "
                    f"{ex['removed'][0]} {ex['removed'][1][:80]!r} (cosine {ex['similarity']})"
                )
        self.stat_update("largest_cluster", value=largest[0]["size"] if largest else 0)
        return {
            "summary": summary,
            "stage": self.stage,
            "clusters": n_clusters,
            "clustered_docs": sum(s["docs"] for s in shares),
            "removed": n_removed,
            "no_vector": sum(no_vector.values()),
            "split_clusters": splits,
            "largest_clusters": [{k: v for k, v in c.items() if k != "c"} for c in largest],
            "sources": sources,
            "warnings": warnings,
        } | (
            {
                "in_earlier_run": {
                    "docs": sum(by_run.values()),
                    "by_run": dict(sorted(by_run.items())),
                }
            }
            if earlier
            else {}
        )
