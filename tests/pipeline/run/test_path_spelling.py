"""One meaning of a path: a run from YAML and from Python of the same sources and output, each
path spelled relative to its root (`../corpus/x` from a config's folder, `corpus/x` from the
current folder) or absolute, has one run key, finds the other up to date, writes the same
bytes; `.txt` documents' ids and the reject records' file names do not depend on the spelling.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from gristmill.pipeline.api import Run, Source
from gristmill.pipeline.run.plan import RunPlan
from gristmill.pipeline.run.runner import run
from gristmill.stages.formats.docio import read_records
from tests.conftest import restored_logging
from tests.pipeline.run.test_runner import tree_bytes

TEXTS = {
    "en.txt": "The old mill stood beside the river for two hundred years.",
    "zh.txt": "这座老磨坊在河边矗立了两百年，每年秋天磨谷子。",
    "ar.txt": "وقفت الطاحونة القديمة بجانب النهر مئتي عام.",
    "hi.txt": "पुरानी चक्की दो सौ वर्षों तक नदी के किनारे खड़ी रही।",
}
STAGES = ["tokenize", "pack"]


@pytest.fixture
def project(tmp_path) -> Path:
    """proj/corpus/x: `.txt` documents and a JSON-lines file with a malformed line; the YAML
    in proj/configs/ (its paths relative to that folder)."""
    proj = tmp_path / "proj"
    x = proj / "corpus" / "x"
    x.mkdir(parents=True)
    for name, text in TEXTS.items():
        (x / name).write_text(text, encoding="utf-8")
    (x / "more.jsonl").write_text('{"id": "m1", "text": "Старая мельница."}\n{"text": 1}\n')
    (proj / "configs").mkdir()
    cfg = {
        "output": "../out",
        "sources": [{"name": "web", "paths": ["../corpus/x"]}],
        "stages": STAGES,
    }
    (proj / "configs" / "run.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return proj


def said(what) -> list[str]:
    lines: list[str] = []
    with restored_logging():
        if isinstance(what, Run):
            what.run(echo=lines.append, report=False)
        else:
            run(str(what), echo=lines.append)
    return lines


def ids_and_rejects(out: Path) -> tuple[list[str], list[str]]:
    ids = [
        i
        for p in sorted(out.glob("tokens/*/*.docs.parquet"))
        for i in pq.read_table(p)["doc_id"].to_pylist()
    ]
    files = [
        r["file"] for p in sorted(out.glob("rejected/input/*.jsonl.zst")) for r in read_records(p)
    ]
    return sorted(ids), files


def test_every_spelling_of_a_path_is_one_run(project, monkeypatch):
    monkeypatch.chdir(project)
    relative = Run([Source("web", ["corpus/x"])], STAGES, "out")
    absolute = Run([Source("web", [str(project / "corpus" / "x")])], STAGES, str(project / "out"))
    yaml_plan = RunPlan.load(project / "configs" / "run.yaml")
    assert relative.plan().key == absolute.plan().key == yaml_plan.key
    assert [e.path for e in yaml_plan.inputs] == [e.path for e in relative.plan().inputs]

    said(project / "configs" / "run.yaml")
    ids, rejects = ids_and_rejects(project / "out")
    assert ids == ["m1", "x/ar.txt", "x/en.txt", "x/hi.txt", "x/zh.txt"]
    assert rejects == ["x/more.jsonl"]
    for other in (relative, absolute):  # the YAML's run is theirs: up to date
        assert said(other)[0].startswith("up to date: ")
    monkeypatch.chdir(project / "corpus")  # from another folder, spelled from there
    assert said(Run([Source("web", ["x"])], STAGES, "../out"))[0].startswith("up to date: ")


def test_the_python_run_writes_the_yaml_runs_bytes(project, tmp_path, monkeypatch):
    said(project / "configs" / "run.yaml")
    monkeypatch.chdir(tmp_path)  # the same files spelled from another root, another output
    said(Run([Source("web", ["proj/corpus/x"])], STAGES, "elsewhere"))
    assert tree_bytes(tmp_path / "elsewhere") == tree_bytes(project / "out")
    assert ids_and_rejects(tmp_path / "elsewhere") == ids_and_rejects(project / "out")


def test_two_files_shown_alike_take_more_of_their_folders(tmp_path):
    for folder in ("a/data", "b/data"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "web.jsonl").write_text('{"text": "Some text."}\n')
    plan = Run(
        [Source("one", ["a/data"]), Source("two", [str(tmp_path / "b" / "data")])],
        STAGES,
        "out",
        root=tmp_path,
    ).plan()
    assert [e.path for e in plan.inputs] == ["a/data/web.jsonl", "b/data/web.jsonl"]
