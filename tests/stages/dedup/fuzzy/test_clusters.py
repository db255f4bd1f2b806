"""`minhash_dedup`'s clustering in many tasks: the components found bucket by bucket and part
by part are the graph's connected components, and the decisions, the report and the guard's
choices are the same bytes for every `cluster_tasks`."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.fuzzy.components import (
    crossing_links,
    local_components,
    read_part,
    write_nodes,
)
from gristmill.stages.dedup.fuzzy.roots import components_by_parts, resolve
from gristmill.stages.dedup.fuzzy.store import EDGE, Files
from gristmill.stages.dedup.minhash.stage import MinHashDedup, MinHashParams
from tests.conftest import run_step, stats
from tests.stages.global_stage import copies


def components_by_search(edges: list[tuple[int, int]]) -> dict[int, int]:
    """Each node's smallest connected node, by a plain graph search."""
    adj = defaultdict(set)
    for a, b in edges:
        adj[a].add(b)
        adj[b].add(a)
    label = {}
    for start in sorted(adj):
        if start in label:
            continue
        seen, todo = {start}, [start]
        while todo:
            for y in adj[todo.pop()] - seen:
                seen.add(y)
                todo.append(y)
        for x in seen:
            label[x] = start
    return label


def graph(rng) -> list[tuple[int, int]]:
    """Chains, stars and small cliques over gids of several map tasks, shuffled."""
    nodes = rng.permutation([(t << 32) | i for t in range(5) for i in range(120)]).tolist()
    edges, k = [], 0
    for length in (2, 3, 7, 25, 60):  # chains
        run = nodes[k : k + length]
        edges += list(zip(run, run[1:], strict=False))
        k += length
    for size in (4, 12, 40):  # stars
        edges += [(nodes[k], x) for x in nodes[k + 1 : k + size]]
        k += size
    for _ in range(20):  # cliques of three
        a, b, c = nodes[k : k + 3]
        edges += [(a, b), (b, c), (a, c)]
        k += 3
    return [(min(a, b), max(a, b)) for a, b in edges]


@pytest.mark.parametrize("buckets", [1, 3, 8])
@pytest.mark.parametrize("parts", [1, 2, 4, 8])
def test_components_over_buckets_and_parts_are_the_graphs(tmp_path, buckets, parts):
    rng = np.random.RandomState(buckets * 10 + parts)
    edges = graph(rng)
    files = Files(StageContext(work=tmp_path, tasks=buckets), "minhash_dedup")
    per_bucket = defaultdict(list)
    for e in edges:  # each pair in one to three buckets, as bands in different buckets find it
        for b in set(rng.randint(0, buckets, rng.randint(1, 4)).tolist()):
            per_bucket[b].append(e)
    redges = []
    for b in range(buckets):
        got = np.zeros(len(per_bucket[b]), dtype=EDGE)
        if per_bucket[b]:
            got["a"], got["b"] = np.array(per_bucket[b], dtype=np.uint64).T
        ours, recs = local_components(got)
        redges.append(ours)
        write_nodes(files, b, recs, parts)
    links = [crossing_links(np.concatenate([read_part(files, b, j) for b in range(buckets)]))
             for j in range(parts)]  # fmt: skip
    relabel, roots = components_by_parts(np.concatenate(links), parts)
    expected = components_by_search(edges)
    for ours in redges:
        labels = resolve(relabel, roots, ours["root"])
        assert [expected[int(a)] for a in ours["a"]] == labels.tolist()
    if buckets > 1:  # chains seen in part by a bucket: their roots had to be linked
        assert sum(len(x) for x in links) > 0


WORDS = [f"w{i:04d}" for i in range(5000)]
HAN = [chr(0x4E00 + i) for i in range(3000)]


def texts(rng, base: list[str], steps: int, changes: int, joiner: str) -> list[str]:
    """A chain: each text is the one before with `changes` more tokens replaced."""
    out, cur = [], list(base)
    for _ in range(steps):
        for p in rng.choice(len(cur), changes, replace=False):
            cur[p] = WORDS[rng.randint(len(WORDS))] if joiner else HAN[rng.randint(len(HAN))]
        out.append(joiner.join(cur))
    return out


def corpus() -> list[Document]:
    """Exact copies, stars of near copies around a hub, chains whose ends are far apart (the
    guard's case), in spaced words and in Han text without spaces; two sources."""
    rng = np.random.RandomState(7)
    docs = []
    for c in range(6):
        spaced = c % 2 == 0
        vocab, joiner, n = (WORDS, " ", 240) if spaced else (HAN, "", 400)
        base = [vocab[i] for i in rng.randint(0, len(vocab), n)]
        group = [joiner.join(base)] * 2  # an exact copy
        group += [texts(rng, base, 1, 2 + k % 3, joiner)[0] for k in range(3 + c)]  # a star
        group += texts(rng, base, 6 + c, 4 if spaced else 7, joiner)  # a chain
        src = "web" if c % 3 else "books"
        docs += [
            Document(text=t, id=f"g{c}-{k}", metadata={"source": src, "origin": "real"})
            for k, t in enumerate(group)
        ]
    docs += [Document(text=" ".join(rng.choice(WORDS, 200)), id=f"solo{k}") for k in range(10)]
    return docs


def run(tmp_path, tasks: int, cluster_tasks: int) -> tuple[dict, bytes, dict]:
    """({id: metadata}, the report's bytes, the reduce steps' stats) of one run."""
    ctx = StageContext(work=tmp_path / "work", tasks=tasks, source_order={"web": 0, "books": 1})
    params = MinHashParams(cluster_tasks=cluster_tasks, guard_min_cluster=4)
    stage, docs = MinHashDedup(params, ctx), corpus()
    mapped = [run_step(stage.map_step(), copies(docs[r::tasks]), r, tasks) for r in range(tasks)]
    counts = defaultdict(int)
    for step, n in stage.reduce_steps():
        for rank in range(n):
            run_step(step, None, rank, n)
        for key, value in stats(step).items():
            counts[key] += value
    out = {}
    for rank in range(tasks):
        got = copies(mapped[rank])
        kept = {d.id for d in run_step(stage.filter_step(), got, rank, tasks)}
        out.update({d.id: (d.id in kept, sorted(d.metadata.items())) for d in got})
    return out, stage.fuzzy.files(ctx).report().read_bytes(), dict(counts)


@pytest.mark.slow
def test_decisions_and_report_are_the_same_for_every_cluster_tasks(tmp_path):
    one, report, counts = run(tmp_path / "1", 4, 1)
    removed = [i for i, (kept, _) in one.items() if not kept]
    assert counts["guard_refused_merges"] > 0 and counts["guard_kept"] > 0  # chains were cut
    assert len(removed) > 20 and counts["clusters"] >= 12
    assert any(i.startswith("g1-") for i in removed)  # Han text is clustered too
    for tasks, parts in [(4, 2), (4, 3), (4, 4), (4, 8), (3, 8), (1, 4)]:
        got, got_report, got_counts = run(tmp_path / f"{tasks}-{parts}", tasks, parts)
        assert got == one, (tasks, parts)
        assert got_report == report, (tasks, parts)
        for key in ("clusters", "removed", "guard_kept", "guard_refused_merges"):
            assert got_counts[key] == counts[key], (key, tasks, parts)
