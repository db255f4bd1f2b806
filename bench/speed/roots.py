"""Memory of `minhash_dedup`'s roots, joins and labels tasks (`stages/dedup/fuzzy/roots.py`)
on a synthetic link set, per number of parts (`cluster_tasks`): each task runs in a process of
its own and its peak RSS, less that of a process that did everything but run the task
(imports, the compiled union-find), is its memory.

Links: `--links` of them over components of 2 to 8 bucket roots (gids of 1,000 map tasks),
half stars around the component's smallest root, half chains, as the links phase writes them
((smaller root, larger root), shuffled over the links tasks, each file by the part of its
first root). The labels every root gets are checked to be the same for every number of parts.

    .venv/bin/python -m bench.speed.roots [--links 10000000] [--parts 1,8]
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.fuzzy.components import write_parts
from gristmill.stages.dedup.fuzzy.roots import Joins, Labels, Roots, load_labels, resolve
from gristmill.stages.dedup.fuzzy.store import NODE, Files
from gristmill.stages.dedup.minhash.stage import MinHashDedup, MinHashParams


def synthetic_links(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(NODE links, every root) for about `n` links."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 9, size=n // 3)
    sizes = sizes[: np.searchsorted(np.cumsum(sizes - 1), n) + 1]
    total = int(sizes.sum())
    roots = np.unique((rng.integers(0, 1000, 2 * total, dtype=np.uint64) << np.uint64(32))
                      | rng.integers(0, 1 << 31, 2 * total, dtype=np.uint64))[:total]  # fmt: skip
    roots = rng.permutation(roots)
    comp = np.repeat(np.arange(len(sizes)), sizes)
    order = np.lexsort((roots, comp))  # each component's roots ascending
    roots_sorted = roots[order]
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    first = np.repeat(roots_sorted[starts], sizes)
    prev = np.r_[roots_sorted[:1], roots_sorted[:-1]]
    is_first = np.zeros(total, dtype=bool)
    is_first[starts] = True
    star = np.repeat(np.arange(len(sizes)) % 2 == 0, sizes)
    links = np.empty(int((~is_first).sum()), dtype=NODE)
    links["node"] = np.where(star, first, prev)[~is_first]
    links["root"] = roots_sorted[~is_first]
    return links[rng.permutation(len(links))][:n], roots


def task(folder: str, phase: str, parts: int, rank: int) -> None:
    """One task in this process (`phase` "none": the baseline), then its peak RSS in KiB
    (VmHWM: ru_maxrss would carry the parent's peak over the exec)."""
    ctx = StageContext(work=Path(folder), tasks=1)
    fuzzy = MinHashDedup(MinHashParams(cluster_tasks=parts), ctx).fuzzy
    from gristmill.stages.dedup.fuzzy.sets import compiled

    compiled()  # compiled (or loaded from numba's cache) in the baseline too
    steps = {"roots": Roots, "joins": Joins, "labels": Labels}
    if phase != "none":
        list(steps[phase](fuzzy, ctx).run(None, rank, parts))
    status = Path("/proc/self/status").read_text().splitlines()
    print(next(int(x.split()[1]) for x in status if x.startswith("VmHWM:")))


def peak(folder: Path, phase: str, parts: int, rank: int) -> int:
    cmd = [sys.executable, "-m", "bench.speed.roots", "--task", str(folder), phase]
    out = subprocess.run([*cmd, str(parts), str(rank)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def measure(links: np.ndarray, roots: np.ndarray, parts: int, folder: Path) -> dict:
    files = Files(StageContext(work=folder, tasks=1), MinHashDedup.name)
    which = np.random.default_rng(1).integers(0, parts, len(links))
    for j in range(parts):  # as the links tasks write them
        mine = links[which == j]
        files.links(j).parent.mkdir(parents=True, exist_ok=True)
        write_parts(files.links(j), mine, mine["node"], parts)
    base = peak(folder, "none", parts, 0)
    got = {"parts": parts, "baseline_mib": base / 1024}
    for phase, ranks in (("roots", parts), ("joins", parts), ("labels", 1)):
        rss = [peak(folder, phase, parts, r) - base for r in range(ranks)]
        got[f"{phase}_max_mib"] = max(rss) / 1024
    relabel, labels = load_labels(files, parts)
    got["joins"] = sum(len(np.fromfile(files.joins(k), dtype=NODE)) for k in range(parts))
    got["labels_sha256"] = hashlib.sha256(resolve(relabel, labels, roots).tobytes()).hexdigest()
    return got


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--task":
        task(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--links", type=int, default=10_000_000)
    ap.add_argument("--parts", default="1,8")
    args = ap.parse_args()
    links, roots = synthetic_links(args.links)  # the parent's memory is not the tasks'

    print(f"{len(links):,} links over {len(roots):,} roots ({links.nbytes / 2**20:.0f} MiB)")
    shas = set()
    for parts in [int(x) for x in args.parts.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            got = measure(links, roots, parts, Path(tmp))
        shas.add(got["labels_sha256"])
        print(" ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in got.items()))  # fmt: skip
    print("labels identical for every parts:", len(shas) == 1)
    if len(shas) != 1:
        sys.exit(1)


if __name__ == "__main__":
    main()
