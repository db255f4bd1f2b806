"""Every built-in stage's declared metadata is what it writes: each stage is run (as `gristmill
apply` runs it, global stages through their phases) on a small multilingual sample, and the keys
it added or changed are compared with its declaration (stages/fields.py), so a declaration cannot
drift from the code. On the documents it keeps: every key it touched is among `writes_for`, every
key declared not optional is on each of them, every declared key on at least one (the sample is
made to bring each out), and each value is of its declared type. On the documents it drops:
every key it touched is among its writes and `drops`."""

from __future__ import annotations

import pytest

from gristmill.pipeline.run.apply import apply_stage, parse_settings
from gristmill.stages.base import StageContext
from gristmill.stages.fields import fits
from gristmill.stages.formats.docio import read_records
from gristmill.stages.pack import Pack
from gristmill.stages.registry import STAGES, get_stage
from gristmill.stages.tokenize import tokenizer_info
from tests.conftest import docs, run_step, write_jsonl
from tests.stages.classifier.models import fasttext_model

# Written for this test: one text a script (with and without spaces, full-width punctuation).
TEXTS = {
    "en": "The mill by the river grinds barley every morning, and the baker collects the flour "
    "before noon so the bread is ready for the market in the square.",
    "zh": "河边的磨坊每天早上磨大麦，面包师中午前取走面粉，这样广场上的集市开门时面包就做好了。"
    "村里的孩子们放学后常常跑去看水车转动。",
    "ja": "川沿いの水車小屋では毎朝大麦を挽き、パン屋は昼前に粉を受け取って、広場の市場に"
    "間に合うようにパンを焼きます。子どもたちは放課後に水車を見に行きます。",
    "ko": "강가의 방앗간은 매일 아침 보리를 찧고, 제빵사는 정오 전에 밀가루를 가져가서 광장 시장이 "
    "열릴 때 빵을 준비합니다.",
    "th": "โรงสีริมแม่น้ำบดข้าวบาร์เลย์ทุกเช้า และคนทำขนมปังมารับแป้งก่อนเที่ยงเพื่อให้ขนมปังพร้อมสำหรับตลาดในจัตุรัส",
    "ar": "تطحن الطاحونة التي على النهر الشعير كل صباح، ويأخذ الخباز الدقيق قبل الظهر حتى يكون "
    "الخبز جاهزا لسوق الساحة.",
    "hi": "नदी किनारे की चक्की हर सुबह जौ पीसती है, और नानबाई दोपहर से पहले आटा ले जाता है ताकि "
    "चौक के बाज़ार के लिए रोटी तैयार रहे।",
    "ru": "Мельница у реки каждое утро мелет ячмень, а пекарь забирает муку до полудня, чтобы хлеб "
    "был готов к открытию рынка на площади.",
}
QUIZ = "Which river carries the grain from the upper valley to the old mill before the floods"
PII = " Write to miller.jones@example.org or call +44 20 7946 0958 for an order."


def sample() -> list[dict]:
    """The documents, with the keys a source would give (url, language, source, origin)."""
    recs = []
    for i, (lang, text) in enumerate(TEXTS.items()):
        recs.append(
            {"id": f"{lang}-1", "text": text + (PII if i % 3 == 0 else ""), "language": lang}
            | {"url": f"https://mill.example/{lang}?utm_source=x", "source": "web"}
            | {"origin": "real"}
        )
    en, zh = recs[0], recs[1]
    recs.append(en | {"id": "en-copy", "url": "https://mill.example/en"})  # the same text, URL
    near = zh["text"].replace("大麦", "小麦")
    recs.append(zh | {"id": "zh-near", "text": near, "url": "https://mill.example/zh2"})
    long = " ".join([en["text"]] * 6)  # a long repeated span, for substring_dedup
    recs.append(en | {"id": "en-long", "text": long, "url": "https://mill.example/long"})
    recs.append(en | {"id": "quiz", "text": f"{en['text']} {QUIZ}?", "url": "https://q.example/"})
    recs.append(
        en
        | {"id": "syn", "origin": "synthetic", "generator": "m", "url": "https://s.example/"}
        | {"text": TEXTS["ru"]}
    )
    return recs


def scored_sample() -> list[dict]:
    """The sample with a score on each document (one left without: `select` drops it)."""
    recs = sample()
    for i, rec in enumerate(recs[:-1]):
        rec["quality_score"] = (i * 7 % 11) / 10
    return recs


def html_sample() -> list[dict]:
    pages = [
        {
            "id": f"{lang}-page",
            "text": f"<html><body><article><h1>{lang}</h1><p>{text}</p><p>{text}</p>"
            "</article></body></html>",
            "content_type": "text/html",
            "url": f"https://mill.example/{lang}.html",
        }
        for lang, text in TEXTS.items()
    ]
    return [*pages, {"id": "wet", "text": TEXTS["en"], "content_type": "text/plain"}]


def benchmarks(tmp_path) -> str:
    path = write_jsonl(tmp_path / "quiz.jsonl", [{"question": QUIZ, "answer": "The Brenn"}])
    return f"benchmarks=[{path}]"


# (stage, settings, sample): every stage `apply` can run, with the settings that change what it
# reads or writes
CASES = [
    ("provenance", (), sample),
    ("langid", ("min_score=0",), sample),
    ("extract", (), html_sample),
    ("line_clean", ("min_chars=10",), sample),
    ("line_freq", ("min_pages=2", "scope=corpus"), sample),
    ("url_dedup", (), sample),
    ("exact_dedup", (), sample),
    ("exact_dedup", ("level=paragraph", "min_chars=10"), sample),
    ("minhash_dedup", (), sample),
    ("simhash_dedup", (), sample),
    ("substring_dedup", ("min_tokens=20",), sample),
    ("decontaminate", ("action=drop", "ngram=8"), sample),
    ("decontaminate", ("action=redact", "ngram=8"), sample),
    ("quality", ("thresholds=off",), sample),
    ("quality", ("language=ja",), sample),
    ("classifier", ("kind=fasttext", "key=dclm", "score=label:__label__hq"), sample),
    (
        "classifier",
        ("kind=fasttext", "key=dclm", "score=label:__label__hq", "min_score=0.5"),
        sample,
    ),
    ("safety", ("words={'*': [barley]}", "min_blocked_words=1"), sample),
    ("pii", (), sample),
    ("ensemble", ("key=ens", "scores=[quality_score]", "quantiles=3"), scored_sample),
    (
        "ensemble",
        ("key=ens", "scores=[quality_score]", "edges={quality_score: [0.3]}", "combine=mean"),
        scored_sample,
    ),
    ("select", ("keep_top=0.5", "by=language"), scored_sample),
    ("bucket", ("quantiles=3",), scored_sample),
    ("bucket", ("edges=[0.3, 0.6]",), scored_sample),
    ("tokenize", ("min_tokens=40",), sample),
    ("embed", (), sample),
    ("semantic_dedup", ("threshold=0.999",), sample),
]


def test_every_stage_but_pack_and_write_is_covered():
    """pack and write write a run's output, which `apply` does not run (write's declarations:
    tests/stages/test_write.py)."""
    outputs = {name for name, cls in STAGES.items() if cls.writes_output}
    assert outputs == {"pack", "write"}
    # generate asks a server: its declarations against what it writes are checked in
    # tests/stages/generate/test_bad_answers.py
    assert {name for name, _, _ in CASES} == set(STAGES) - outputs - {"generate"}


def changed(before: dict, after: dict) -> set[str]:
    return {k for k, v in after.items() if k not in before or before[k] != v}


@pytest.mark.parametrize(("name", "settings", "make"), CASES, ids=lambda x: str(x))
def test_a_stage_writes_what_it_declares(tmp_path, name, settings, make):
    if name == "decontaminate":
        settings = (*settings, benchmarks(tmp_path))
    if name == "classifier":
        settings = (*settings, f"model={fasttext_model(tmp_path / 'dclm.bin')}")
    if name == "semantic_dedup":
        pytest.importorskip("faiss", reason="semantic_dedup's k-means: the `classify` extra")
    if name in ("embed", "semantic_dedup"):  # an encoder of the test's own
        from tests.stages.embed.models import encoder_folder

        settings = (*settings, f"model={encoder_folder(tmp_path / 'encoder')}")
    recs = make()
    given = {r["id"]: {k: v for k, v in r.items() if k not in ("id", "text")} for r in recs}
    inp, out, rej = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "rejected.jsonl"
    write_jsonl(inp, recs)
    apply_stage(name, str(inp), str(out), settings, str(rej))
    cls = get_stage(name)
    params = cls.Params.model_validate(parse_settings(name, settings))
    writes = {f.name: f for f in cls.writes_for(params)}
    kept = list(read_records(out))
    assert kept, "the sample must keep documents for the check to mean anything"
    seen: set[str] = set()
    for rec in kept:
        meta = rec["metadata"]
        touched = changed(given[rec["id"]], meta)
        assert touched <= set(writes), (rec["id"], touched - set(writes))
        assert {k for k, f in writes.items() if not f.optional} <= set(meta), rec["id"]
        for k in touched:
            assert fits(writes[k], meta[k]), (rec["id"], k, meta[k])
        seen |= touched & set(writes) | (set(writes) & set(meta))
    assert seen == set(writes), f"declared, never written: {set(writes) - seen}"
    allowed = set(writes) | {f.name for f in cls.drops}
    for rec in read_records(rej):
        touched = changed(given[rec["id"]], rec["metadata"])
        assert touched <= allowed, (rec["id"], rec["reason"], touched - allowed)


def test_pack_writes_no_metadata(tmp_path):
    """`pack` ends a run (no `apply`): it takes the token ids and writes shards, nothing more."""
    info = tokenizer_info("gpt2", None)
    ctx = StageContext(out=tmp_path, tokenizer=info)
    batch = docs(*TEXTS.values(), source="web", origin="real", synthetic=None, n_tokens=3)
    for d in batch:
        d.metadata["_tokens"] = [1, 2, info.eos_id]
    before = [dict(d.metadata) for d in batch]
    run_step(Pack(None, ctx), batch)
    assert Pack.writes == ()
    assert [d.metadata for d in batch] == [
        {k: v for k, v in b.items() if k != "_tokens"} for b in before
    ]
