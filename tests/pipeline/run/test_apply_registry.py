"""Every stage of the registry through `gristmill apply` on plain `{id, text}` records: no
`source`, `language` or `url`, as a user evaluating one stage on their own data has them.

Each stage must finish without an internal error (the CLI's exceptions propagate here), keep or
drop every input id exactly once (every drop with a reason), leave the text alone unless it is a
stage that rewrites text, and do its own job on these records (`STAGE_CHECKS`). `pack` and
`write` write a run's output, not jsonl: `apply pack` is one line of error, exit 2.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.stages.formats.docio import read_records
from gristmill.stages.registry import STAGES, is_global
from tests.conftest import write_jsonl
from tests.stages.classifier.models import fasttext_model

EN = (
    "The old mill stood beside the river for more than two hundred years, grinding wheat and "
    "barley for the farms of the valley. Every autumn the farmers brought their harvest down the "
    "narrow road, and the miller weighed each sack before it went under the stones. In winter the "
    "wheel froze, so the work stopped until the ice broke in early spring. Today the building is "
    "a small museum, and children from the village school visit it to learn how flour was made."
)
# an email in each script, with and without spaces around it, next to full-width and the
# script's own punctuation; ko and th have letters right after the top-level domain
SCRIPTS = {
    "zh": "请联系张伟：zhangwei@mail.cn，谢谢。明天下午三点在会议室开会。",
    "ja": "お問い合わせは tanaka@mail.jp まで。東京の天気は晴れです。",
    "ko": "문의는 kim@mail.kr로 보내 주세요. 서울은 오늘 맑습니다.",
    "th": "ติดต่อเราที่somchai@mail.co.thได้ทุกวัน กรุงเทพมหานครเป็นเมืองหลวง",
    "ar": "راسلنا على ali@mail.eg، شكرا لكم. القاهرة مدينة كبيرة.",
    "hi": "कृपया raj@mail.in पर लिखें। दिल्ली भारत की राजधानी है।",
    "ru": "Пишите на ivan@mail.ru（ответим завтра）. Москва — столица России.",
}
EMAILS = {"zh": "zhangwei@mail.cn", "ja": "tanaka@mail.jp", "ko": "kim@mail.kr"}
EMAILS |= {"th": "somchai@mail.co.th", "ar": "ali@mail.eg", "hi": "raj@mail.in"}
EMAILS |= {"ru": "ivan@mail.ru"}
HTML = (
    "<html><head><title>Mill</title></head><body><nav>Home | About</nav>"
    f"<article><p>{EN}</p></article><footer>Contact</footer></body></html>"
)
RECORDS = [
    {"id": "en", "text": EN},
    {"id": "en-near", "text": EN.replace("two hundred", "three hundred")},  # one word changed
    {"id": "en-upper", "text": EN.upper()},  # the same words, another case
    *({"id": lang, "text": text} for lang, text in SCRIPTS.items()),
    {"id": "html", "text": HTML},
]
TEXT = {r["id"]: r["text"] for r in RECORDS}
REWRITES = {"extract", "pii", "substring_dedup"}  # the stages that may change `text`


def check_provenance(kept, dropped):
    assert not dropped
    for r in kept.values():  # no source given: the one default, as `gristmill run` would write
        assert (r["metadata"]["source"], r["metadata"]["origin"]) == ("default", "real")


def check_langid(kept, dropped):
    # the default allowed list may drop some, but every kept document is labelled, and the
    # labels of the clear cases are right
    for r in kept.values():
        assert 0 < r["metadata"]["language_score"] <= 1
    for lang in ("en", *SCRIPTS):
        if lang in kept:
            assert kept[lang]["metadata"]["language"] == lang


def check_extract(kept, dropped):
    assert kept["html"]["text"] == EN  # the article, without the navigation and footer
    assert {i: r["reason"] for i, r in dropped.items()} == {
        i: "no_text_extracted" for i in TEXT if i != "html"
    }


def check_url_dedup(kept, dropped):
    assert not dropped  # no url: nobody's duplicate
    assert all("duplicate_of" not in r["metadata"] for r in kept.values())


def check_exact_dedup(kept, dropped):
    assert {i: (r["reason"], r["metadata"]["duplicate_of"]) for i, r in dropped.items()} == {
        "en-upper": ("duplicate_exact", "en")
    }


def check_minhash_dedup(kept, dropped):
    # the survivor is the longest text ("three" is longer than "two")
    assert {i: (r["reason"], r["metadata"]["duplicate_of"]) for i, r in dropped.items()} == {
        "en": ("near_duplicate", "en-near"),
        "en-upper": ("near_duplicate", "en-near"),
    }
    assert kept["en-near"]["metadata"]["cluster_size"] == 3
    assert all("cluster_id" not in kept[i]["metadata"] for i in SCRIPTS)


def check_quality(kept, dropped):
    assert "en" in kept and "en-near" in kept
    for r in [*kept.values(), *dropped.values()]:
        assert 0 <= r["metadata"]["quality_score"] <= 1


def check_safety(kept, dropped):
    assert not dropped
    assert all(r["metadata"]["safety_flags"]["blocked_words"] == {} for r in kept.values())


def masked(lang: str, r: dict) -> None:
    """`r` is SCRIPTS[lang] with exactly its email replaced, and nothing else changed."""
    assert r["text"] == SCRIPTS[lang].replace(EMAILS[lang], "<EMAIL>"), lang
    assert r["metadata"]["pii_counts"] == {"email": 1}, lang


def check_pii(kept, dropped):
    assert not dropped
    for lang in SCRIPTS:
        masked(lang, kept[lang])
    assert all(kept[i]["text"] == TEXT[i] for i in ("en", "en-near", "html"))


# a benchmark sharing a sentence with EN (13+ words, in another case) and a short item (12
# characters: matched whole) with the Chinese record
BENCH = [
    {"question": "EVERY AUTUMN THE FARMERS BROUGHT THEIR HARVEST DOWN THE NARROW ROAD, AND THE"},
    {"text": "明天下午三点在会议室开会"},
]


def check_substring_dedup(kept, dropped):
    # the passage "en-near" and "html" share with "en" (the first copy) leaves them, all of it
    assert not dropped
    assert kept["en"]["text"] == EN
    assert kept["en-near"]["text"] == "The old mill stood beside the river for more than three"
    assert kept["html"]["metadata"]["substring_chars_removed"] > 400
    assert all(kept[i]["text"] == TEXT[i] for i in ("en-upper", *SCRIPTS))


def check_decontaminate(kept, dropped):
    contaminated = {"en", "en-near", "en-upper", "zh", "html"}
    assert {i: r["reason"] for i, r in dropped.items()} == dict.fromkeys(
        contaminated, "contaminated"
    )
    assert all(r["metadata"]["contaminated_by"] == ["bench"] for r in dropped.values())


def check_classifier(kept, dropped):
    """fastText's probability of `__label__hq`, on every record (min_score is not set)."""
    assert not dropped
    scores = [r["metadata"]["dclm"] for r in kept.values()]
    assert all(0.0 <= s <= 1.0 for s in scores) and len(set(scores)) > 1


def check_tokenize(kept, dropped):
    assert not dropped
    assert all(r["metadata"]["n_tokens"] > 0 for r in kept.values())
    assert kept["en"]["metadata"]["n_tokens"] == kept["en-near"]["metadata"]["n_tokens"]


def check_line_clean(kept, dropped):
    # one line each, every one with its words and no boilerplate marker: nothing to remove
    assert not dropped
    assert all(r["metadata"]["line_clean_removed"] == {} for r in kept.values())


def check_line_freq(kept, dropped):
    # no URL: of no site, so neither counted nor changed
    assert not dropped
    assert all(r["metadata"]["line_freq_removed"] == 0 for r in kept.values())


OUTPUT_STAGES = ("pack", "write")  # `writes_output`: a run's output, not apply's jsonl
# adds documents (an LLM's answers) and asks a server: `apply generate` is tested against one in
# tests/stages/generate/test_bad_answers.py
ASKS_A_SERVER = ("generate",)


def check_no_score(kept, dropped):
    # plain records carry no score: each is kept in the rejects with the reason, none lost
    assert not kept
    assert {i: r["reason"] for i, r in dropped.items()} == dict.fromkeys(TEXT, "no_score")


def check_embed(kept, dropped):
    assert not dropped and all("_embedding" not in r["metadata"] for r in kept.values())


def check_semantic_dedup(kept, dropped):
    """`en` and `en-near` (one word changed) are one: the longer (`three hundred`) stays; every
    script is kept, each in a k-means cluster."""
    assert {i: r["metadata"]["duplicate_of"] for i, r in dropped.items()} == {"en": "en-near"}
    assert dropped["en"]["reason"] == "semantic_duplicate"
    assert all(r["metadata"]["cluster_id"].startswith("c") for r in kept.values())


STAGE_CHECKS = {
    "provenance": check_provenance,
    "langid": check_langid,
    "extract": check_extract,
    "line_clean": check_line_clean,
    "line_freq": check_line_freq,
    "url_dedup": check_url_dedup,
    "exact_dedup": check_exact_dedup,
    "minhash_dedup": check_minhash_dedup,
    "quality": check_quality,
    "classifier": check_classifier,
    "safety": check_safety,
    "pii": check_pii,
    "simhash_dedup": check_minhash_dedup,  # the same clusters on these records
    "substring_dedup": check_substring_dedup,
    "decontaminate": check_decontaminate,
    "tokenize": check_tokenize,
    "select": check_no_score,
    "bucket": check_no_score,
    "embed": check_embed,
    "semantic_dedup": check_semantic_dedup,
    "ensemble": check_no_score,
}


def test_every_stage_has_a_check():
    assert set(STAGE_CHECKS) | set(OUTPUT_STAGES) | set(ASKS_A_SERVER) == set(STAGES)
    assert any(is_global(cls) for cls in STAGES.values())  # the global ones are covered too


@pytest.mark.parametrize(
    "stage", [s for s in STAGES if s not in OUTPUT_STAGES and s not in ASKS_A_SERVER]
)
def test_apply_on_plain_records(tmp_path, stage):
    inp = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    out, rej = tmp_path / "out.jsonl", tmp_path / "rejected.jsonl"
    args = ["apply", stage, "-i", str(inp), "-o", str(out), "--rejected", str(rej)]
    if stage == "decontaminate":  # a stage with a required setting
        bench = write_jsonl(tmp_path / "bench.jsonl", BENCH)
        args += ["--set", f"benchmarks=[{bench}]"]
    if stage == "select":  # and the share it keeps
        args += ["--set", "keep_top=0.5"]
    if stage == "ensemble":  # the scores it combines and the key it writes
        args += ["--set", "key=ens", "--set", "scores=[quality_score]"]
    if stage == "classifier":  # a model of the test's own, and the score's key
        model = fasttext_model(tmp_path / "dclm.bin")
        args += ["--set", f"model={model}", "--set", "kind=fasttext", "--set", "key=dclm"]
        args += ["--set", "score=label:__label__hq"]
    if stage == "semantic_dedup":
        pytest.importorskip("faiss", reason="semantic_dedup's k-means: the `classify` extra")
    if stage in ("embed", "semantic_dedup"):  # an encoder of the test's own
        from tests.stages.embed.models import encoder_folder

        args += ["--set", f"model={encoder_folder(tmp_path / 'encoder')}"]
        # a random encoder: the pair is at 0.9989, every other pair at most 0.9915
        args += ["--set", "threshold=0.995"] if stage == "semantic_dedup" else []
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    kept = {r["id"]: r for r in read_records(out)}
    dropped = {r["id"]: r for r in read_records(rej)}
    # every id once: kept or dropped with a reason
    assert sorted([*kept, *dropped]) == sorted(TEXT)
    assert all(isinstance(r["reason"], str) and r["reason"] for r in dropped.values())
    assert f"{out}: {len(kept)} documents" in result.stderr
    if stage not in REWRITES:
        assert all(r["text"] == TEXT[i] for i, r in [*kept.items(), *dropped.items()])
    STAGE_CHECKS[stage](kept, dropped)


def apply_plain(tmp_path, stage: str, *settings: str) -> tuple[dict, dict]:
    """(kept, dropped) by id after `gristmill apply STAGE --set ...` on RECORDS."""
    inp = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    out, rej = tmp_path / "out.jsonl", tmp_path / "rejected.jsonl"
    args = ["apply", stage, "-i", str(inp), "-o", str(out), "--rejected", str(rej)]
    args += [x for s in settings for x in ("--set", s)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    kept = {r["id"]: r for r in read_records(out)}
    dropped = {r["id"]: r for r in read_records(rej)}
    assert sorted([*kept, *dropped]) == sorted(TEXT)
    return kept, dropped


def test_apply_exact_dedup_bloom_on_plain_records(tmp_path):
    """The Bloom method drops what the exact method drops; a Bloom filter names no survivor."""
    kept, dropped = apply_plain(tmp_path, "exact_dedup", "method=bloom")
    assert {i: (r["reason"], r["metadata"]["duplicate_of"]) for i, r in dropped.items()} == {
        "en-upper": ("duplicate_exact", None)
    }
    assert all(r["text"] == TEXT[i] for i, r in kept.items())


@pytest.mark.parametrize("method", ["exact", "bloom"])
def test_apply_exact_dedup_paragraphs_on_plain_records(tmp_path, method):
    """Paragraph level, either method: the paragraph every copy of EN shares (after case and
    width are normalised) is removed from all of them, the others' texts stay."""
    kept, dropped = apply_plain(
        tmp_path, "exact_dedup", "level=paragraph", "max_occurrences=1", f"method={method}"
    )
    assert {i: r["reason"] for i, r in dropped.items()} == {
        "en": "empty_after_paragraph_dedup",
        "en-upper": "empty_after_paragraph_dedup",
    }
    assert all(kept[i]["text"] == TEXT[i] for i in ("en-near", *SCRIPTS))


@pytest.mark.parametrize("stage", OUTPUT_STAGES)
def test_apply_pack_is_one_line_exit_2(tmp_path, stage):
    inp = write_jsonl(tmp_path / "in.jsonl", RECORDS[:1])
    cmd = [sys.executable, "-m", "gristmill.pipeline.cli.main", "apply", stage, "-i", str(inp)]
    cmd += ["-o", str(tmp_path / "out.jsonl")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        f"error: apply {stage}: it writes a run's output, not jsonl; use `gristmill run`\n"
    )
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("lang", ["ko", "th"])  # letters right after the top-level domain
def test_pii_email_before_letters(tmp_path, lang):
    inp = write_jsonl(tmp_path / "in.jsonl", [{"id": lang, "text": SCRIPTS[lang]}])
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["apply", "pii", "-i", str(inp), "-o", str(out)])
    assert result.exit_code == 0, result.output
    [r] = read_records(out)
    masked(lang, r)


def test_line_freq_leaves_pages_without_urls_alone(tmp_path):
    # of no site: neither counted nor changed, though the line of `en` is on two of them
    (tmp_path / "site").mkdir()
    kept, dropped = apply_plain(tmp_path / "site", "line_freq", "min_pages=2")
    assert not dropped and all(r["text"] == TEXT[i] for i, r in kept.items())
    # over the corpus they count: the only line of `en` and of `en-upper` is on both
    kept, dropped = apply_plain(tmp_path, "line_freq", "min_pages=2", "scope=corpus")
    assert {i: r["reason"] for i, r in dropped.items()} == dict.fromkeys(
        ("en", "en-upper"), "too_short_after_line_freq"
    )
    assert dropped["en-upper"]["text"] == TEXT["en-upper"]  # whole, in the rejects
    assert all(r["text"] == TEXT[i] for i, r in kept.items())
