"""The removed lines of kept pages, after a run with the line stages: in `inspect --doc` and in
the report's table per stage, rule and language, with examples."""

from __future__ import annotations

import yaml

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.inspect import describe_doc
from gristmill.pipeline.report.html import REPORT
from gristmill.pipeline.report.lines import removed_lines
from tests.conftest import run_quietly, write_jsonl

ZH = "河边的磨坊每天早上磨大麦，面包师中午前取走面粉。"
RU = "Мельница у реки каждое утро мелет ячмень для пекарей города."


def test_removed_lines_are_shown_and_counted(tmp_path):
    pages = [
        {"id": "zh", "text": f"{ZH}\n隐私政策\n{ZH}", "language": "zh"},
        {"id": "ru", "text": f"{RU}\nГлавная\nПожалуйста, включите JavaScript.", "language": "ru"},
    ]
    write_jsonl(tmp_path / "data" / "web.jsonl", pages)
    source = {"name": "web", "paths": [str(tmp_path / "data" / "web.jsonl")]}
    config = {
        "output": str(tmp_path / "out"),
        "sources": [source | {"fields": {"language": "language"}}],
        "stages": [{"line_clean": {"min_chars": 10}}, "tokenize", "pack"],
    }
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
    run_quietly(tmp_path / "run.yaml")
    out = tmp_path / "out"
    shown = list(describe_doc(out, "ru"))
    assert shown[-2:] == [
        f"removed by line_clean (min_words, line 2, chars {len(RU) + 1}..{len(RU) + 9}): Главная",
        f"removed by line_clean (javascript, line 3, chars {len(RU) + 9}..{len(RU) + 41}): "
        "Пожалуйста, включите JavaScript.",
    ]
    found = removed_lines(out, mf.load(out))
    assert {k: (v["lines"], v["chars"]) for k, v in found.items()} == {
        ("line_clean", "dup_line", "zh"): (1, len(ZH)),
        ("line_clean", "policy", "zh"): (1, 5),
        ("line_clean", "javascript", "ru"): (1, 32),
        ("line_clean", "min_words", "ru"): (1, 8),
    }
    assert found[("line_clean", "policy", "zh")]["examples"] == [("zh:2", "隐私政策")]
    page = (out / REPORT).read_text(encoding="utf-8")
    assert "<h2>Lines removed from kept pages</h2><table>" in page
    assert "<td>line_clean</td><td>policy</td><td>zh</td><td>1</td><td>5</td>" in page
