"""Which copy survives a dedup: one rule, used by `url_dedup`, `exact_dedup` and `minhash_dedup`.

Among documents judged the same, the one with the smallest key survives:

    (origin rank, source rank, preference, id)

- real before synthetic (a model's copy never displaces the text it may have been made from);
- then the earlier source in the config's `sources` (unknown sources after all listed ones);
- then the stage's `prefer` setting: `longest` text first, `shortest` first, or `none`;
- then the smallest id (string order), so the choice never depends on tasks or file order.

The key is a plain list of JSON values, so map tasks can write it and reduce tasks compare it.
"""

from __future__ import annotations

from typing import Literal

from datatrove.data import Document

from gristmill.stages import fields as md
from gristmill.stages.base import StageContext

READS = (md.SOURCE.maybe(), md.ORIGIN.maybe())  # the rule's first two keys (provenance writes them)
# what a near-duplicate stage writes on the one document of a cluster it keeps
NEAR_WRITES = (
    md.CLUSTER_ID.maybe("on the survivor of a cluster"),
    md.CLUSTER_SIZE.maybe("on the survivor of a cluster"),
)
# what the document a near-duplicate stage drops carries to rejected/, and an earlier run's match
NEAR_DROPS = (
    md.DUPLICATE_OF,
    md.DUPLICATE_SIMILARITY,
    md.IN_EARLIER_RUN.only("with `dedup_against`"),
)
ORIGIN_RANK = {"real": 0, "synthetic": 1}

Prefer = Literal["none", "longest", "shortest"]


def preference(text: str, prefer: Prefer) -> int:
    """Smaller is better: `longest` ranks by minus the length."""
    if prefer == "longest":
        return -len(text)
    if prefer == "shortest":
        return len(text)
    return 0


def survivor_key(doc: Document, ctx: StageContext, prefer: Prefer = "none") -> list:
    order = ctx.source_order.get(md.SOURCE.of(doc), len(ctx.source_order))
    origin = ORIGIN_RANK.get(md.ORIGIN.of(doc), 0)
    return [origin, order, preference(doc.text, prefer), str(doc.id)]
