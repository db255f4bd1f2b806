"""The fastText quality classifier: train from positive and negative documents, score texts.

The recipe is DCLM's (Li et al. 2024, "DataComp-LM"): a supervised fastText model over word
unigrams and bigrams, trained for a few epochs on high-quality positives against a sample of
the raw pool as negatives; its probability of the positive label is the score. Both sides see
the same normalisation (`prepare`): lower case, whitespace runs (newlines included) to one
space, since fastText reads one line per example.

Training threads: the fastText build we use (fasttext-numpy2-wheel 0.9.2) allocates the input
matrix without zeroing it and initialises it in blocks of one tenth, one block per thread, so
with fewer than 10 threads part of the matrix keeps whatever the allocator returned and
training dies with "Encountered NaN" (always, for small vocabularies). With 11 threads every
block, and the remainder, is written. Training is therefore always run with at least
MIN_TRAIN_THREADS threads. fastText's training is lock-free across threads, so two trainings
on the same data give slightly different models; scoring with one model file is deterministic.
"""

from __future__ import annotations

import os
import random
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.atomic import atomic_path
from gristmill.stages.formats.docio import open_binary
from gristmill.stages.formats.fasttext import load_fasttext

POSITIVE, NEGATIVE = "__label__hq", "__label__lq"
MIN_TRAIN_THREADS = 11


def prepare(text: str) -> str:
    return " ".join(text.lower().split())


def read_texts(path: str | os.PathLike, field: str = "text", limit: int | None = None):
    """Texts of a jsonl file (.gz/.zst too); a bad line is an error naming file and line."""
    path = Path(path)
    if not path.is_file():
        raise GristmillError(f"{path}: file not found")
    out: list[str] = []
    with open_binary(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                raise GristmillError(f"{path}:{lineno}: not valid JSON ({e})") from None
            text = rec.get(field) if isinstance(rec, dict) else None
            if not isinstance(text, str):
                raise GristmillError(f"{path}:{lineno}: no string field {field!r}")
            if text.strip():
                out.append(text)
                if limit is not None and len(out) >= limit:
                    break
    return out


@dataclass(frozen=True)
class TrainSettings:
    epoch: int = 5
    word_ngrams: int = 2
    dim: int = 64
    lr: float = 0.1
    min_count: int = 1
    bucket: int = 200_000  # hashed bigram rows: the model file is ~ (words + bucket) * dim * 4 B
    threads: int = MIN_TRAIN_THREADS
    seed: int = 0
    valid_fraction: float = 0.1  # held out, for the accuracy and AUC reported after training


def roc_auc(scores: list[float], labels: list[int]) -> float:
    """Area under the ROC curve (the Mann-Whitney U statistic; tied scores count one half)."""
    pairs = sorted(zip(scores, labels, strict=True))
    n_pos = sum(labels)
    n_neg = len(labels) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    rank_sum, i = 0.0, 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        mid_rank = (i + 1 + j) / 2  # ranks i+1 .. j share their mean
        rank_sum += mid_rank * sum(lbl for _, lbl in pairs[i:j])
        i = j
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def _write_lines(path: Path, examples: Iterable[tuple[str, str]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for label, text in examples:
            f.write(f"{label} {prepare(text)}\n")


def train(
    positive: list[str], negative: list[str], out: str | os.PathLike, settings: TrainSettings
) -> dict:
    """Train on the texts, save the model to `out` (atomically), return held-out figures."""
    import fasttext

    if not positive or not negative:
        raise GristmillError("quality train: need at least one positive and one negative text")
    if settings.word_ngrams > 1 and settings.bucket < 1:
        raise GristmillError("quality train: word n-grams > 1 need bucket >= 1")
    examples = [(POSITIVE, t) for t in positive] + [(NEGATIVE, t) for t in negative]
    random.Random(settings.seed).shuffle(examples)
    n_valid = int(len(examples) * settings.valid_fraction)
    valid, train_set = examples[:n_valid], examples[n_valid:]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gristmill-quality-") as tmp:
        data = Path(tmp) / "train.txt"
        _write_lines(data, train_set)
        model = fasttext.train_supervised(
            input=str(data),
            epoch=settings.epoch,
            wordNgrams=settings.word_ngrams,
            dim=settings.dim,
            lr=settings.lr,
            minCount=settings.min_count,
            bucket=settings.bucket,
            thread=max(settings.threads, MIN_TRAIN_THREADS),
            seed=settings.seed,
            verbose=0,
        )
    with atomic_path(out) as tmp:
        model.save_model(str(tmp))
    report = {"train": len(train_set), "valid": len(valid), "labels": list(model.labels)}
    if valid:
        probs = positive_probs(model, [t for _, t in valid])
        labels = [int(lbl == POSITIVE) for lbl, _ in valid]
        correct = sum((p >= 0.5) == bool(y) for p, y in zip(probs, labels, strict=True))
        report |= {"valid_accuracy": correct / len(valid), "valid_auc": roc_auc(probs, labels)}
    return report


def positive_probs(model, texts: list[str]) -> list[float]:
    """P(positive) of each text under a binary model trained by `train`."""
    if not texts:
        return []
    labels, probs = model.predict([prepare(t) for t in texts], k=2)
    out = []
    for labs, ps in zip(labels, probs, strict=True):
        p = dict(zip(labs, (float(x) for x in ps), strict=True))
        if POSITIVE in p:
            out.append(min(1.0, p[POSITIVE]))
        else:  # a one-label answer: the other label took all the mass
            out.append(max(0.0, 1.0 - p.get(NEGATIVE, 1.0)))
    return out


def load_model(path: str | os.PathLike):
    """A model trained by `train`; refuses files that are not one (clear message, no crash)."""
    path = Path(path)
    if not path.is_file():
        raise GristmillError(f"quality model {path}: file not found")
    try:
        model = load_fasttext(path)
    except ValueError as e:
        raise GristmillError(f"quality model {path}: not a fastText model ({e})") from None
    if POSITIVE not in model.labels:
        raise GristmillError(
            f"quality model {path}: labels {list(model.labels)} lack {POSITIVE}; train it with "
            "`gristmill quality train`"
        )
    return model
