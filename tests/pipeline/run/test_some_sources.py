"""A stage on some sources (`sources:` / `exclude_sources:` in its entry): the other sources'
documents pass it untouched, uncounted and in their place; a global stage dedups over its
sources only; the config check, `--plan`, the funnel and the run key know it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from datatrove.data import Document

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.funnel import funnel_lines
from gristmill.pipeline.run.config import ConfigError, parse_config
from gristmill.pipeline.run.phases import compiled
from gristmill.pipeline.run.plan import RunPlan, phase_lines
from gristmill.stages.base import Stage, StageContext
from gristmill.stages.formats.docio import read_records
from tests.conftest import run_quietly, write_jsonl

# prose in every script the house tests, and code whose lines prose rules would cut
PROSE = {
    "en": "The mill grinds barley by the river every morning, and the baker buys it.",
    "zh": "河边的磨坊每天早上磨大麦，面包师买下它。",
    "ja": "川辺の水車小屋は毎朝大麦をひき、パン屋がそれを買う。",
    "ko": "강가의 방앗간은 매일 아침 보리를 빻고 제빵사가 그것을 산다.",
    "th": "โรงสีริมแม่น้ำบดข้าวบาร์เลย์ทุกเช้า และคนทำขนมปังก็ซื้อไป",
    "ar": "تطحن الطاحونة الشعير على ضفة النهر كل صباح، ويشتريه الخباز.",
    "hi": "नदी किनारे की चक्की हर सुबह जौ पीसती है, और नानबाई उसे खरीदता है।",
    "ru": "Мельница у реки каждое утро мелет ячмень, и пекарь его покупает.",
}
CODE = "import os\nfor name in os.listdir('.'):\n    print(name)  # 名前 ИМЯ\nx = {'a': 1}\n"


def web_text(lang: str, i: int) -> str:
    # a prose paragraph, and lines `line_clean` removes (no end punctuation, `javascript`)
    return f"{PROSE[lang]} {i}\n{PROSE[lang]}\nHome\nEnable javascript to view this page\n"


def write_corpus(folder: Path) -> None:
    web = [
        {"id": f"w-{lang}-{i}", "text": web_text(lang, i), "url": f"https://{lang}.example/{i}"}
        for lang in PROSE
        for i in range(3)
    ]
    # two copies of a page on the web, and a third in the code (a docstring's paragraph)
    web += [{"id": f"w-copy{k}", "text": f"{PROSE['ru']}\n{PROSE['ar']}\n"} for k in (1, 2)]
    code = [{"id": f"c-{i}", "text": f"{CODE}# {i} {PROSE['ja']}\n"} for i in range(6)]
    code += [{"id": "c-copy", "text": CODE}, {"id": "c-copy2", "text": CODE}]
    code += [{"id": "c-prose", "text": f"{PROSE['ru']}\n{PROSE['ar']}\n"}]
    write_jsonl(folder / "web.jsonl", web)
    write_jsonl(folder / "code.jsonl", code)


def config(folder: Path, stages: list, name: str = "run.yaml", out: str = "out") -> Path:
    data = {
        "output": out,
        "tasks": 2,
        "workers": 1,
        "sources": [
            {"name": "web", "paths": ["web.jsonl"]},
            {"name": "code", "paths": ["code.jsonl"]},
        ],
        "stages": [*stages, {"write": {"format": "jsonl"}}],
    }
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return path


def documents(out: Path) -> dict[str, list[dict]]:
    """source -> its written records, task by task in order."""
    found = {}
    for path in sorted((out / "documents").glob("*/*.jsonl.zst")):
        found.setdefault(path.parent.name, []).extend(read_records(path))
    return found


def test_the_entry_keys_leave_the_params(tmp_path):
    write_corpus(tmp_path)
    stages = [{"line_clean": {"sources": ["web"], "min_words": 3}}, "exact_dedup"]
    run = parse_config(config(tmp_path, stages))
    first = run.stages[0]
    assert (first.sources, first.exclude_sources, first.params) == (["web"], None, {"min_words": 3})
    assert run.stages[1].sources is None


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        (
            {"line_clean": {"sources": ["wbe"]}},
            "stages[0].line_clean.sources[0]: no source 'wbe' (sources: web, code); "
            "did you mean `web`?",
        ),
        (
            {"line_clean": {"exclude_sources": ["web", "code"]}},
            "stages[0].line_clean.exclude_sources: leaves out every source; drop the stage",
        ),
        (
            {"line_clean": {"sources": ["web"], "exclude_sources": ["code"]}},
            "stages[0]: give `sources` or `exclude_sources`, not both",
        ),
        (
            {"tokenize": {"sources": ["web"]}},
            "stages[0].tokenize.sources: tokenize applies to every source (it gives the "
            "tokenizer later stages need)",
        ),
    ],
)
def test_a_wrong_selection_is_refused_naming_the_key(tmp_path, entry, line):
    write_corpus(tmp_path)
    stages = [entry, "pack"] if "tokenize" in entry else [entry]
    path = config(tmp_path, stages)
    if "tokenize" in entry:  # ends with pack, not write
        data = yaml.safe_load(path.read_text())
        data["stages"] = stages
        path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as e:
        RunPlan.load(path, keyed=False)
    assert line in str(e.value)


def test_what_a_stage_writes_on_some_sources_only_their_stages_may_need(tmp_path):
    write_corpus(tmp_path)
    langid = {"langid": {"sources": ["web"]}}
    with pytest.raises(ConfigError, match=r"stages\[1\].quality reads metadata 'language'"):
        RunPlan.load(config(tmp_path, [langid, "quality"]), keyed=False)
    RunPlan.load(config(tmp_path, [langid, {"quality": {"sources": ["web"]}}]), keyed=False)


class Upper(Stage):
    """Upper-cases the text; drops a document whose text has `drop`; batches of 3."""

    name = "upper"
    batch_size = 3

    def process_batch(self, docs):
        for d in docs:
            d.text = d.text.upper()
        return ["has_drop" if "DROP" in d.text else None for d in docs]


def test_other_sources_pass_in_their_place_uncounted():
    sources = ["web", "code", "web", "web", "code", "code", "web", "web", "web", "web", "code"]
    docs = [
        Document(text=f"{PROSE['hi']} {i}{' drop' if i == 3 else ''}", id=str(i),
                 metadata={"source": s})
        for i, s in enumerate(sources)
    ]  # fmt: skip
    stage = Upper(ctx=StageContext(only=frozenset({"web"})))
    out = list(stage.run(iter(docs)))
    assert [d.id for d in out] == [str(i) for i in range(11) if i != 3]
    for d in out:
        web = d.metadata["source"] == "web"
        assert d.text == (f"{PROSE['hi']} {d.id}".upper() if web else f"{PROSE['hi']} {d.id}")
    stats = {k: v.total for k, v in stage.stats.stats.items()}  # its 7 web documents only
    assert (stats["seen"], stats["kept"], stats["dropped"]) == (7, 6, 1)
    assert stats["funnel/web/docs_in"] == 7 and not any("code" in k for k in stats)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("some_sources")
    write_corpus(tmp)
    on_web = [{"line_clean": {"sources": ["web"]}}, {"exact_dedup": {"sources": ["web"]}}]
    on_all = ["line_clean", "exact_dedup"]
    for name, stages in [("web", on_web), ("all", on_all)]:
        run_quietly(config(tmp, stages, f"{name}.yaml", f"out_{name}"))
    return {"web": tmp / "out_web", "all": tmp / "out_all", "root": tmp}


@pytest.mark.slow
def test_a_run_leaves_the_other_source_as_it_came(runs):
    inputs = {r["id"]: r["text"] for r in read_records(runs["root"] / "code.jsonl")}
    code = documents(runs["web"])["code"]
    # every code document, in input order, its text as it was: exact_dedup over the web only
    # finds neither the code's two copies nor the web page the code repeats
    assert {r["id"]: r["text"] for r in code} == inputs
    assert [r["id"] for r in code] == sorted(inputs, key=list(inputs).index)
    web = {r["id"]: r["text"] for r in documents(runs["web"])["web"]}
    assert "w-copy1" in web and "w-copy2" not in web  # over the web, a corpus-wide dedup
    assert all("javascript" not in t and "Home" not in t for t in web.values())
    # the same stages on every source cut the code, and dedup it against the web
    cut = {r["id"]: r["text"] for r in documents(runs["all"]).get("code", [])}
    assert "c-prose" not in cut and "c-copy2" not in cut and cut != inputs


@pytest.mark.slow
def test_plan_funnel_and_key_show_the_sources(runs):
    root = runs["root"]
    plan = compiled(RunPlan.load(root / "web.yaml"))
    lines = "\n".join(phase_lines(plan.phases, plan.run))
    assert "line_clean (web only)" in lines and "exact_dedup filter (web only)" in lines
    manifest = mf.load(runs["web"])
    assert set(manifest.funnel["line_clean"]) == {"web"}
    assert set(manifest.funnel["write"]) == {"web", "code"}
    assert any("line_clean" in ln and "passed: not one of its sources" in ln
               for ln in funnel_lines(manifest))  # fmt: skip
    assert manifest.stages["line_clean"].seen == 3 * len(PROSE) + 2
    assert manifest.config["stages"][0]["line_clean"]["sources"] == ["web"]
    assert RunPlan.load(root / "all.yaml").key != plan.key
    # `exclude_sources: [code]` is the same run as `sources: [web]`
    excluded = [{"line_clean": {"exclude_sources": ["code"]}},
                {"exact_dedup": {"exclude_sources": ["code"]}}]  # fmt: skip
    path = config(root, excluded, "excluded.yaml", "out_web")
    assert RunPlan.load(path).key == plan.key


@pytest.mark.slow
def test_a_replayed_filter_keeps_its_sources(runs):
    """exact_dedup on the web only, then url_dedup on every source: the next phase replays the
    exact filter over the work files, which must pass the code again, in order."""
    root = runs["root"]
    stages = [{"exact_dedup": {"sources": ["web"]}}, "url_dedup"]
    path = config(root, stages, "replay.yaml", "out_replay")
    plan = compiled(RunPlan.load(path))
    lines = "\n".join(phase_lines(plan.phases, plan.run))
    assert "work files (exact_dedup (web only) replayed)" in lines
    run_quietly(path)
    found = documents(root / "out_replay")
    inputs = [r["id"] for r in read_records(root / "code.jsonl")]
    assert [r["id"] for r in found["code"]] == inputs  # no URL: url_dedup keys none of them
    web = [r["id"] for r in found["web"]]
    assert "w-copy1" in web and "w-copy2" not in web
