"""`decontaminate`: precision and recall on a set built here, and CPU-s per MB.

Benchmark items are passages of development-corpus documents (set A) in English, Chinese,
Japanese, Arabic and Hindi; host documents are other documents of the same language (set B).
Each item goes into a host document:

- positives: `whole` (the item as it is), `part` (a contiguous piece of it, 60% of its units,
  at least `ngram` + 2), `case_punct` (another case, punctuation changed to or from full-width
  forms or removed, whitespace doubled or, in spaceless scripts, spaces put between characters);
- negatives: `paraphrase` (the item with every sixth unit replaced and its halves swapped: no
  `ngram` units in a row survive), hand-written paraphrases of hand-written items, and the
  host documents untouched (`clean`).

A clean host that shares an n-gram with an item by itself (translations, boilerplate: the
corpus repeats itself) is neither right nor wrong: a plain reference (regex words, Python sets
of tuples) finds those, and they are counted apart, with the reference's agreement.

    .venv/bin/python -m bench.evals.decont [--items 40] [--seed 0] [--speed-mb 20]
"""

from __future__ import annotations

import argparse
import random
import re
import tempfile
import time
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

import orjson
from datatrove.data import Document

from gristmill.stages.dedup.decont.stage import Decontaminate, DecontaminateParams
from gristmill.stages.formats.docio import read_records
from gristmill.stages.text.scripts import is_spaceless

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "data" / "corpus" / "docs_web.jsonl.zst"
LANGS = {"en": ("en",), "zh": ("zh_CN", "zh-CN", "zh-TW"), "ja": ("ja", "ja-JP"),
         "ar": ("ar-MA",), "hi": ("hi",)}  # fmt: skip
N = 13
# hand-written items and paraphrases (our own text): same meaning, other words
HAND = {
    "en": ("Which planet in our solar system has the longest day when measured against its year",
           "Of all the planets orbiting the sun which one has a day lasting longer than its year"),
    "zh": ("光合作用把二氧化碳和水转化为葡萄糖并释放出氧气",
           "植物利用阳光，把水和二氧化碳变成糖，同时放出氧气"),
    "ja": ("光合成は二酸化炭素と水からブドウ糖を作り酸素を放出する",
           "植物は日光を使って水と二酸化炭素から糖を作り、酸素を出す"),
    "ar": ("أي كوكب في المجموعة الشمسية يملك أطول يوم مقارنة بطول سنته الكاملة حول الشمس تقريبا",
           "من بين الكواكب التي تدور حول الشمس ما الكوكب الذي يدوم يومه أطول من سنته"),
    "hi": ("सौर मंडल में किस ग्रह का दिन उसके वर्ष की तुलना में सबसे लंबा होता है यह बताइए",
           "सूर्य की परिक्रमा करने वाले ग्रहों में से किसका दिन उसके साल से भी लंबा चलता है"),
}  # fmt: skip
FULL = {ord(c): ord(c) + 0xFEE0 for c in ",.!?:;()"}  # ASCII -> full-width punctuation
# the reference's words: \w (letters, digits, _) and combining marks (Devanagari and Arabic
# vowel signs are marks, which \w leaves out)
MARKS = "".join(re.escape(chr(c)) for c in range(0x10000) if unicodedata.category(chr(c))[0] == "M")
WORD_RE = re.compile(rf"[\w{MARKS}]+")
HALF = {v: k for k, v in FULL.items()} | {ord("。"): ord("."), ord("、"): ord(",")}


def ref_units(text: str) -> list[str]:
    """The reference's units: regex words of the NFKC, case-folded text, spaceless letters
    one by one."""
    out = []
    for w in WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold()):
        run = ""
        for ch in w:
            if is_spaceless(ch):
                if run:
                    out.append(run)
                    run = ""
                out.append(ch)
            else:
                run += ch
        if run:
            out.append(run)
    return out


def ref_grams(text: str) -> set[tuple]:
    u = ref_units(text)
    return {tuple(u[i : i + N]) for i in range(len(u) - N + 1)}


def spaceless(lang: str) -> bool:
    return lang in ("zh", "ja")


def load(langs) -> dict[str, list[str]]:
    by = defaultdict(list)
    want = {code: lang for lang, codes in langs.items() for code in codes}
    for r in read_records(CORPUS):
        lang = want.get(r["lang"])
        if lang and len(r["text"]) > 200:
            by[lang].append(r["text"])
    return by


def ref_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the reference's units in `text` as written (regex words; spaceless letters one
    by one)."""
    out = []
    for m in WORD_RE.finditer(text):
        s = m.start()
        for i in range(m.start(), m.end()):
            if is_spaceless(text[i]):
                if s < i:
                    out.append((s, i))
                out.append((i, i + 1))
                s = i + 1
        if s < m.end():
            out.append((s, m.end()))
    return out


def pick_item(rng: random.Random, text: str) -> str | None:
    """A passage of 30-50 units, cut at unit boundaries, within one paragraph."""
    spans, size = ref_spans(text), rng.randint(30, 50)
    if len(spans) < size + 10:
        return None
    s = rng.randrange(0, len(spans) - size)
    item = text[spans[s][0] : spans[s + size - 1][1]]
    return item if "\n\n" not in item else None


def case_punct(rng: random.Random, item: str, lang: str) -> str:
    t = item.upper() if rng.random() < 0.5 else item.swapcase()
    t = t.translate(HALF if rng.random() < 0.5 else FULL)
    if spaceless(lang):
        if rng.random() < 0.5:  # a space between every two spaceless letters
            return "".join(c + (" " if is_spaceless(c) else "") for c in t)
        return t.replace("，", "").replace("、", " ")
    return re.sub(r"\s+", lambda m: "  " + rng.choice(["", ",", "-", "\n"]), t)


def part(rng: random.Random, item: str) -> str | None:
    spans = ref_spans(item)
    k = max(N + 2, int(0.6 * len(spans)))
    if len(spans) < k:
        return None
    s = rng.randrange(0, len(spans) - k + 1)
    return item[spans[s][0] : spans[s + k - 1][1]]


def paraphrase(rng: random.Random, item: str, filler: list[str]) -> str:
    units = [item[s:e] for s, e in ref_spans(item)]
    for i in range(0, len(units), 6):
        units[i] = rng.choice(filler)
    half = len(units) // 2
    return " ".join(units[half:] + units[:half])


def insert(rng: random.Random, host: str, piece: str) -> str:
    cut = [m.end() for m in re.finditer(r"[.。!?！？]\s*", host)] or [len(host)]
    at = rng.choice(cut)
    return host[:at] + " " + piece + " " + host[at:]


def build(rng: random.Random, corpus: dict[str, list[str]], n_items: int):
    """(benchmark items per language, labelled documents: (id, text, lang, case)). Positives
    and paraphrases go into hosts that share no n-gram with any item by themselves."""
    items, hosts = {}, {}
    for lang, texts in corpus.items():
        texts = texts[:]
        rng.shuffle(texts)
        half = len(texts) // 2
        got = [x for x in (pick_item(rng, t) for t in texts[:half]) if x][:n_items]
        items[lang] = [*got, HAND[lang][0]]
        hosts[lang] = texts[half:]
    grams = set().union(*(ref_grams(t) for its in items.values() for t in its))
    docs = []
    for lang, its in items.items():
        filler = [item[s:e] for item in its for s, e in ref_spans(item)]
        plain = [h for h in hosts[lang] if not ref_grams(h) & grams]
        for k, item in enumerate(its):
            cases = {"whole": item, "part": part(rng, item),
                     "case_punct": case_punct(rng, item, lang),
                     "paraphrase": paraphrase(rng, item, filler)}  # fmt: skip
            if item == HAND[lang][0]:
                cases["paraphrase"] = HAND[lang][1]
            for case, piece in cases.items():
                if piece is not None:
                    doc_id = f"{lang}-{k}-{case}"
                    docs.append((doc_id, insert(rng, rng.choice(plain), piece), lang, case))
        for j, host in enumerate(hosts[lang][: 2 * n_items]):
            docs.append((f"{lang}-clean-{j}", host, lang, "clean"))
    return items, docs


def evaluate(items, docs, tmp: Path) -> dict:
    paths = []
    for lang, its in items.items():
        p = tmp / f"bench_{lang}.jsonl"
        p.write_bytes(b"".join(orjson.dumps({"question": t}) + b"\n" for t in its))
        paths.append(str(p))
    stage = Decontaminate(DecontaminateParams(benchmarks=paths))
    kept = {d.id for d in stage.run([Document(text=t, id=i) for i, t, _, _ in docs])}
    grams = set().union(*(ref_grams(t) for its in items.values() for t in its))
    res = defaultdict(Counter)
    for doc_id, text, lang, case in docs:
        hit = doc_id not in kept
        if case == "clean":
            natural = bool(ref_grams(text) & grams)
            case = "clean_shares_ngram" if natural else "clean"
            res[(lang, "reference_agrees")][hit == natural] += 1
        res[(lang, case)][hit] += 1
    return res


def speed(items, mb: float, tmp: Path) -> tuple[float, float, float]:
    """(CPU-s per MB of text, MB, items) of the stage over the corpus's first `mb` MB."""
    paths = []
    for lang, its in items.items():
        p = tmp / f"s_{lang}.jsonl"
        p.write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in its))
        paths.append(str(p))
    texts, size = [], 0
    for r in read_records(CORPUS):
        texts.append(r["text"])
        size += len(r["text"].encode())
        if size >= mb * 1e6:
            break
    t0 = time.process_time()
    stage = Decontaminate(DecontaminateParams(benchmarks=paths))
    stage.warm()
    build_s = time.process_time() - t0
    t0 = time.process_time()
    for _ in stage.run([Document(text=t, id=str(i)) for i, t in enumerate(texts)]):
        pass
    cpu = time.process_time() - t0
    return cpu / (size / 1e6), size / 1e6, build_s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--speed-mb", type=float, default=20)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    corpus = load(LANGS)
    items, docs = build(rng, corpus, a.items)
    with tempfile.TemporaryDirectory() as tmp:
        res = evaluate(items, docs, Path(tmp))
        per_mb, mb, build_s = speed(items, a.speed_mb, Path(tmp))
    print(f"items per language: { {k: len(v) for k, v in items.items()} }, ngram {N}")
    print(
        "| lang | recall whole | part | case_punct | FP paraphrase | FP clean | "
        "clean sharing an n-gram: flagged | reference agrees |"
    )
    print("|---|---|---|---|---|---|---|---|")
    tot = Counter()
    for lang in items:
        row = []
        for case in ("whole", "part", "case_punct", "paraphrase", "clean", "clean_shares_ngram"):
            c = res[(lang, case)]
            row.append(f"{c[True]}/{c[True] + c[False]}")
            tot[(case, True)] += c[True]
            tot[(case, False)] += c[False]
        agree = res[(lang, "reference_agrees")]
        row.append(f"{agree[True]}/{agree[True] + agree[False]}")
        print(f"| {lang} | " + " | ".join(row) + " |")
    tp = sum(tot[(c, True)] for c in ("whole", "part", "case_punct"))
    fn = sum(tot[(c, False)] for c in ("whole", "part", "case_punct"))
    fp = sum(tot[(c, True)] for c in ("paraphrase", "clean"))
    print(
        f"precision {tp / max(1, tp + fp):.4f}, recall {tp / max(1, tp + fn):.4f} "
        f"(tp {tp}, fn {fn}, fp {fp}; clean hosts sharing an n-gram by themselves excluded)"
    )
    print(
        f"speed: {per_mb:.3f} CPU-s per MB over {mb:.1f} MB of corpus text "
        f"(table of {sum(map(len, items.values()))} items built in {build_s:.2f} CPU-s)"
    )


if __name__ == "__main__":
    main()
