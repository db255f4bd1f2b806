"""A tiny GlotLID-style fastText model (labels `__label__eng_Latn`, ISO 639-3 code and script),
trained in the test on a few KB of words of each language: the shipped stop words of its ISO
639-1 code plus a few content words. `hin_Latn` (Hindi in Latin letters) has no ISO 639-1 code
for its script: the per-language stages give it their `default` settings."""

from __future__ import annotations

import random
from pathlib import Path

from gristmill.stages.quality.model import MIN_TRAIN_THREADS
from gristmill.stages.text.wordlists import DATA, read_word_list

# label -> the ISO 639-1 code whose settings it should find (None: none)
LABELS = {
    "eng_Latn": "en",
    "cmn_Hani": "zh",
    "jpn_Jpan": "ja",
    "kor_Hang": "ko",
    "tha_Thai": "th",
    "arb_Arab": "ar",
    "hin_Deva": "hi",
    "rus_Cyrl": "ru",
    "hin_Latn": None,
}
CONTENT = {
    "eng_Latn": "river mill water bread village winter market",
    "cmn_Hani": "河流 磨坊 面包 村庄 冬天 市场 学校",
    "jpn_Jpan": "かわ みず パン むら ふゆ いちば がっこう",
    "kor_Hang": "강 물 빵 마을 겨울 시장 학교",
    "tha_Thai": "แม่น้ำ น้ำ ขนมปัง หมู่บ้าน ฤดูหนาว ตลาด โรงเรียน",
    "arb_Arab": "نهر ماء خبز قرية شتاء سوق مدرسة",
    "hin_Deva": "नदी पानी रोटी गाँव सर्दी बाज़ार स्कूल",
    "rus_Cyrl": "река вода хлеб деревня зима рынок школа",
    "hin_Latn": "yeh hai mera naam kya aap kaise ho main theek hoon bahut accha nahi ghar paani",
}
SPACELESS = {"cmn_Hani": "。", "jpn_Jpan": "。", "tha_Thai": " "}  # joined without spaces


def words(label: str) -> list[str]:
    code = LABELS[label]
    stop = read_word_list(DATA / "stopwords" / f"{code}.txt") if code else []
    return stop + CONTENT[label].split()


def text(label: str, rng: random.Random, n: int = 40) -> str:
    """`n` words of the language; Chinese and Japanese written without spaces, a full-width full
    stop after every 8 words (Thai: a space ends its sentences)."""
    chosen = rng.choices(words(label), k=n)
    if label in SPACELESS:
        cut = SPACELESS[label]
        return cut.join("".join(chosen[i : i + 8]) for i in range(0, n, 8))
    return " ".join(chosen)


def train(folder: Path) -> Path:
    """The model, saved as `folder / glotlid-tiny.bin`."""
    import fasttext

    rng = random.Random(7)
    data = folder / "glotlid-train.txt"
    with data.open("w", encoding="utf-8") as f:
        for _ in range(80):
            for label in LABELS:
                f.write(f"__label__{label} {text(label, rng, 12)}\n")
    # at least 11 threads: this fastText wheel leaves part of its matrix unset with fewer and
    # training meets NaN (stages/quality/model.py)
    model = fasttext.train_supervised(
        input=str(data), dim=16, minn=1, maxn=3, wordNgrams=2, bucket=20000, epoch=50, lr=0.5,
        thread=MIN_TRAIN_THREADS, seed=1, verbose=0,
    )  # fmt: skip
    path = folder / "glotlid-tiny.bin"
    model.save_model(str(path))
    return path
