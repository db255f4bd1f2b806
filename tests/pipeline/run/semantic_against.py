"""The runs of `semantic_dedup` with `dedup_against` (tests/pipeline/run/
test_semantic_against.py): run A over texts in every script (zh, ja, th, ko, ar, hi, ru and
English with full-width punctuation), run B over near copies of A's texts and texts of its own."""

from __future__ import annotations

import random
from pathlib import Path

from tests.conftest import write_jsonl
from tests.pipeline.run.semantic_data import run_config
from tests.scripts_text import ALPHABETS, text_in

LANGS = [*ALPHABETS, "en"]
EN = "The mill by the river grinds barley every morning（before the market opens）！Then it rests。"
EN_B = "Seven quiet herons watched 42 fishermen mend torn nets near the harbour wall。"


def texts(seed: int, units: int) -> dict[str, str]:
    """A text a language, each with full-width punctuation (seed 1: A's, else B's)."""
    rng = random.Random(seed)
    out = {lang: text_in(lang, rng, units) + "，「完」！" for lang in ALPHABETS}
    out["en"] = EN if seed == 1 else EN_B
    return out


def near(text: str) -> str:
    """A near copy: a short word added at the end."""
    return text + " " + text.split()[0][:2]


def corpus_a() -> list[dict]:
    """Per language: `<l>-a` and its exact copy `<l>-a-copy` (A drops one), and a symbols-only
    text (no vector)."""
    rows = []
    for lang, text in texts(1, 40).items():
        rows += [{"id": f"{lang}-a", "text": text}, {"id": f"{lang}-a-copy", "text": text}]
    return [*rows, {"id": "a-symbols", "text": "★ ※ —— ！！！"}]


def corpus_b() -> list[dict]:
    """Per language: `<l>-near`, a near copy of A's `<l>-a`, and `<l>-same`, the same text
    (B drops both for A; B takes the vector of `<l>-same` from A's store), and `<l>-b`, a
    shorter text unlike A's (kept); a symbols-only text (no vector).

    With the tiny random encoder (tests/stages/embed/models.py) a near copy is at cosine
    0.999-1.0 with its original, a `<l>-b` at most 0.995 with any of A's (ko: Hangul is mostly
    unknown to its tokenizer), the rest at most 0.986: a threshold of 0.997 leaves a margin of
    0.002 on both sides (the stored float16 vectors move a cosine by about 1e-4)."""
    a, b = texts(1, 40), texts(2, 15)
    rows = []
    for lang in LANGS:
        rows += [
            {"id": f"{lang}-near", "text": near(a[lang])},
            {"id": f"{lang}-same", "text": a[lang]},
            {"id": f"{lang}-b", "text": b[lang]},
        ]
    return [*rows, {"id": "b-symbols", "text": "— ※ ★ 。。。"}]


def config(folder: Path, name: str, rows: list[dict], stages: list, **extra) -> Path:
    """A config reading `rows` (three files, written once) into folder / name; its path."""
    data = folder / f"{name}-data"
    if not data.is_dir():
        for f in range(3):
            write_jsonl(data / f"part{f}.jsonl", rows[f::3])
    return run_config(folder, name, data, stages, **extra)
