"""Does the quality filter help a model? A sweep over `quality_score` thresholds, each trained
with the reference GPT on the same number of tokens, scored on held-out text.

    .venv/bin/python -m bench.evals.quality_ablation configs/ablation_quality.yaml

The pool is what a crawl gives a filter: the good and the bad texts of the development domains
(`bench/data/quality_domains.py`: documentation pages with and without their navigation, web
pages' main text and full visible text, clean and degraded text in 40+ languages; no SMS), minus
the held-out groups. Held out, by site or package, never by page: `held_out.packages` and one in
`held_out.every` web sites (by a hash of the site). Two held-out sets, which no threshold ever
sees: their clean text (the main text of those pages) and their full pages.

For each threshold t, the documents with `quality_score >= t` (the shipped score, in the
document's language) are shuffled (seed 0, the same order for every model) and taken until
`tokens` training tokens (GPT-2 ids, each document ending in EOS); for each seed the reference
GPT (`trainer/`) is trained on exactly those tokens, one epoch (fewer kept tokens than that: the
threshold is reported as too strict and skipped). The held-out loss is the mean cross-entropy
over `held_out.tokens` tokens of each held-out set, in consecutive `seq_len` windows. Reported:
each threshold's mean over seeds with a 95% t-interval, and the difference from threshold 0 (no
filter; same seeds, paired) with its interval. Results go to `output`/results.md and .json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from bench import DATA_DIR

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 9: 2.262}


def load_config(path: Path) -> dict:
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    cfg["output"] = (path.parent / cfg["output"]).resolve()
    return cfg


def _held_site(group: str, every: int) -> bool:
    return hashlib.sha1(group.encode("utf-8")).digest()[0] % every == 0


def split(rows: list[dict], held: dict) -> tuple[list[dict], list[str], list[str]]:
    """(pool, held-out clean texts, held-out full pages)."""
    packages, every = set(held.get("packages", [])), int(held.get("every", 4))
    pool, clean, full = [], [], []
    for r in rows:
        if r["domain"] in ("sms", "clean"):
            continue
        out = r["group"] in packages or (r["domain"] == "web" and _held_site(r["group"], every))
        if not out:
            pool.append(r)
        elif r["domain"] in ("docs_web", "web"):
            (clean if r["label"] == 1 else full).append(r["text"])
    return pool, clean, full


def scores(pool: list[dict]) -> list[float]:
    from gristmill.stages.quality.languages import profile
    from gristmill.stages.quality.rules import heuristic_score

    return [heuristic_score(r["signals"], profile(r["lang"])) for r in pool]


def take(ids, order: list[int], tokens: int, eos: int) -> np.ndarray | None:
    """The first `tokens` + 1 ids of the documents in `order` (`ids(i)`: a document's ids),
    each followed by EOS; None if they hold fewer."""
    out, n = [], 0
    for i in order:
        x = ids(i)
        out.append(x + [eos])
        n += len(x) + 1
        if n > tokens:
            return np.concatenate([np.array(x, np.int64) for x in out])[: tokens + 1]
    return None


class Batches:
    """Training batches of consecutive windows of `stream`, in a seeded order (one epoch); the
    trainer's data protocol (next, state_dict, load_state_dict)."""

    def __init__(self, stream: np.ndarray, seq: int, batch: int, seed: int):
        self.stream, self.seq, self.batch, self.i = stream, seq, batch, 0
        self.order = np.arange((len(stream) - 1) // seq)
        np.random.default_rng(seed).shuffle(self.order)

    def __iter__(self):
        return self

    def __next__(self) -> dict:
        starts = self.order[self.i : self.i + self.batch] * self.seq
        if len(starts) < self.batch:
            raise StopIteration
        self.i += self.batch
        s, q = self.stream, self.seq
        return {
            "input_ids": np.stack([s[a : a + q] for a in starts]),
            "labels": np.stack([s[a + 1 : a + q + 1] for a in starts]),
            "position_ids": np.tile(np.arange(q), (self.batch, 1)),
        }

    def state_dict(self) -> dict:
        return {"i": self.i}

    def load_state_dict(self, state: dict) -> None:
        self.i = state["i"]


def held_loss(model, stream: np.ndarray, seq: int, batch: int = 16) -> float:
    import torch

    n = (len(stream) - 1) // seq
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for i in range(0, n, batch):
            rows = range(i, min(n, i + batch))
            x = torch.from_numpy(np.stack([stream[r * seq : r * seq + seq] for r in rows]))
            y = torch.from_numpy(np.stack([stream[r * seq + 1 : r * seq + seq + 1] for r in rows]))
            pos = torch.arange(seq).repeat(len(rows), 1)
            total += float(model(x, pos, y)) * len(rows)
            count += len(rows)
    return total / count


def train_one(cfg: dict, stream: np.ndarray, seed: int, vocab: int, folder: Path):
    from gristmill.trainer import Trainer
    from gristmill.trainer.config import TrainerConfig

    seq, batch = cfg["model"]["seq_len"], cfg["train"]["batch"]
    steps = ((len(stream) - 1) // seq) // batch
    tcfg = TrainerConfig.model_validate(
        {
            "model": cfg["model"] | {"vocab_size": vocab},
            "optim": cfg.get("optim", {}),
            "train": cfg["train"] | {"steps": steps, "seed": seed},
            "guard": cfg.get("guard", {}),
        }
    )
    trainer = Trainer(tcfg, Batches(stream, seq, batch, seed), folder, echo=lambda *_: None)
    trainer.run()
    return trainer.model


def interval(xs: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% t-interval."""
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return mean, math.nan
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return mean, T975.get(n - 1, 1.96) * sd / math.sqrt(n)


def run(cfg: dict, data: Path) -> dict:
    from bench.data.quality_domains import rows_with_signals
    from gristmill.stages.tokenize import tiktoken_gpt2

    t0 = time.perf_counter()
    pool, clean, full = split(rows_with_signals(data), cfg["held_out"])
    score = scores(pool)
    encode = tiktoken_gpt2()
    cache: dict[int, list[int]] = {}

    def ids(i: int) -> list[int]:  # encoded when first taken
        if i not in cache:
            cache[i] = encode([pool[i]["text"]])[0]
        return cache[i]

    eos, vocab, seq = 50256, 50257, cfg["model"]["seq_len"]
    held_n = cfg["held_out"].get("tokens", 16_384)
    held = {}
    for name, texts in (("clean", clean), ("full", full)):
        order = list(range(len(texts)))
        random.Random(0).shuffle(order)
        held[name] = take(lambda i, t=texts: encode([t[i]])[0], order, held_n, eos)
    order = list(range(len(pool)))
    random.Random(0).shuffle(order)
    results = {"pool_docs": len(pool), "thresholds": []}
    for t in cfg["thresholds"]:
        kept = [i for i in order if score[i] >= t]
        good = sum(pool[i]["label"] for i in kept)
        entry = {
            "threshold": t,
            "kept_docs": len(kept),
            "kept_good_share": good / max(1, len(kept)),
        }
        entry["kept_chars"] = sum(len(pool[i]["text"]) for i in kept)
        stream = take(ids, kept, cfg["tokens"], eos)
        if stream is None:
            entry["status"] = "too few tokens"
            results["thresholds"].append(entry)
            continue
        losses: dict[str, list[float]] = {"clean": [], "full": []}
        for seed in cfg["seeds"]:
            with tempfile.TemporaryDirectory(prefix="gristmill-ablation-") as tmp:
                model = train_one(cfg, stream, seed, vocab, Path(tmp))
            for name, h in held.items():
                losses[name].append(held_loss(model, h, seq))
        entry |= {"status": "trained", "losses": losses}
        results["thresholds"].append(entry)
    results["wall_s"] = round(time.perf_counter() - t0, 1)
    return results


def table(results: dict) -> str:
    base = next((e for e in results["thresholds"] if e["status"] == "trained"), None)
    lines = [
        "| threshold | kept docs | good share | kept chars | clean loss (95% CI) | "
        "vs first | full-page loss (95% CI) | vs first |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in results["thresholds"]:
        head = (
            f"| {e['threshold']} | {e['kept_docs']} | {e['kept_good_share']:.2f} | "
            f"{e['kept_chars']:,} |"
        )
        if e["status"] != "trained":
            lines.append(head + f" {e['status']} | | | |")
            continue
        cells = []
        for name in ("clean", "full"):
            m, h = interval(e["losses"][name])
            pairs = zip(e["losses"][name], base["losses"][name], strict=True)
            d, dh = interval([a - b for a, b in pairs])
            cells += [f"{m:.4f} ± {h:.4f}", f"{d:+.4f} ± {dh:.4f}"]
        lines.append(head + " " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config", type=Path)
    ap.add_argument("--data", type=Path, default=DATA_DIR, help="../shared/data")
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    results = run(cfg, args.data)
    out = Path(cfg["output"])
    out.mkdir(parents=True, exist_ok=True)
    text = table(results)
    (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    (out / "results.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    print(f"\n{results['pool_docs']} pool documents; wall time {results['wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
