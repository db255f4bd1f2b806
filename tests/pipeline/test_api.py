"""The Python API (pipeline/api.py): a run built from objects is the YAML's run (one plan, one
key, one error per mistake), a stage class of one's own runs without an entry point and its code
is in the key, and the result's readers give back the documents the run kept and dropped."""

import importlib
import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from gristmill.pipeline.api import ConfigError, Run, Source
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.langid import LangId
from gristmill.stages.pack import Pack
from gristmill.stages.tokenize import Tokenize
from gristmill.stages.write import Write
from tests.conftest import restored_logging
from tests.pipeline.run.test_executors import local_ray as local_ray  # a fixture

# one document per script (langid keeps each in its own language), and two it drops
TEXTS = {
    "en": "The old mill stood beside the river for two hundred years, grinding the valley's "
    "grain every autumn.",
    "zh": "这座老磨坊在河边矗立了两百年，每年秋天都为山谷里的农民磨谷子。",
    "ja": "その古い水車小屋は二百年のあいだ川のそばに立ち、毎年秋には谷の穀物をひいてきた。",
    "ko": "그 오래된 방앗간은 이백 년 동안 강가에 서 있었고, 매년 가을 골짜기의 곡식을 빻았다.",
    "th": "โรงสีเก่าตั้งอยู่ริมแม่น้ำมาสองร้อยปี และบดเมล็ดพืชของหุบเขาทุกฤดูใบไม้ร่วง",
    "ar": "وقفت الطاحونة القديمة بجانب النهر مئتي عام، تطحن حبوب الوادي كل خريف.",
    "hi": "पुरानी चक्की दो सौ वर्षों तक नदी के किनारे खड़ी रही और हर शरद घाटी का अनाज पीसती रही।",
    "ru": "Старая мельница двести лет стояла у реки и каждую осень молола зерно долины.",
}
SHORT = {"tiny": "Hi　！", "tinier": "ok"}  # full-width space and exclamation mark


@pytest.fixture
def corpus(tmp_path) -> Path:
    rows = [{"id": k, "text": v} for k, v in {**TEXTS, **SHORT}.items()]
    path = tmp_path / "data" / "docs.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return tmp_path


LANGID = {"allowed_languages": sorted(TEXTS), "min_score": 0.3}
AS_DICT = {
    "output": "out",
    "tasks": 2,
    "sources": [{"name": "web", "paths": ["data"]}],
    "stages": [{"langid": LANGID}, "tokenize", "pack"],
}


def run_of_objects(root: Path, *stages, **settings) -> Run:
    stages = stages or ((LangId, LANGID), Tokenize, Pack)
    return Run([Source("web", ["data"])], stages, "out", root, tasks=2, **settings)


def quiet(run: Run, **kw):
    with restored_logging():
        return run.run(echo=None, report=False, **kw)


def test_dict_objects_and_yaml_give_one_plan(corpus):
    from_objects = run_of_objects(corpus).plan()
    from_dict = Run.from_dict(AS_DICT, root=corpus).plan()
    (corpus / "run.yaml").write_text(yaml.safe_dump(AS_DICT), encoding="utf-8")
    from_yaml = RunPlan.load(corpus / "run.yaml")
    for plan in (from_dict, from_yaml):
        assert plan.recorded == from_objects.recorded
        assert plan.key == from_objects.key
        assert [s.cls for s in plan.stages] == [s.cls for s in from_objects.stages]
    other = run_of_objects(corpus, (LangId, {**LANGID, "min_score": 0.5}), Tokenize, Pack)
    assert other.plan().key != from_objects.key


def test_a_bad_param_is_the_yaml_error_without_the_file(corpus):
    bad = {**LANGID, "min_score": 2}
    with pytest.raises(ConfigError) as from_python:
        run_of_objects(corpus, (LangId, bad), Tokenize, Pack).plan()
    data = AS_DICT | {"stages": [{"langid": bad}, "tokenize", "pack"]}
    (corpus / "bad.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigError) as from_yaml:
        RunPlan.load(corpus / "bad.yaml")
    line = str(from_python.value)
    assert "\n" not in line and line.startswith("stages[0].langid.min_score:")
    assert str(from_yaml.value) == f"{corpus / 'bad.yaml'}: {line}"
    with pytest.raises(ConfigError, match=r"^stages\[1\]: a pair is \(stage, "):
        run_of_objects(corpus, (LangId, LANGID), (Tokenize,), Pack).plan()
    with pytest.raises(ConfigError, match=r"^workers: "):
        run_of_objects(corpus, workers=0).plan()


STAGE_MODULE = """
import unicodedata

from pydantic import Field

from gristmill.stages.base import Stage, StageParams


class MinCharsParams(StageParams):
    min_chars: int = Field(20, ge=1, description="fewest letters, marks and digits kept")


class MinChars(Stage):
    name = "min_chars"
    Params = MinCharsParams

    def process(self, doc):
        n = sum(unicodedata.category(ch)[0] in "LMN" for ch in doc.text)
        return None if n >= self.params.min_chars else "too_short"
"""


def test_a_class_of_ones_own_runs_and_its_code_is_in_the_key(corpus, monkeypatch):
    (corpus / "lab").mkdir()
    module = corpus / "lab" / "api_lab_stages.py"
    module.write_text(STAGE_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(corpus / "lab"))
    monkeypatch.delitem(sys.modules, "api_lab_stages", raising=False)
    lab = importlib.import_module("api_lab_stages")
    stages = ((LangId, LANGID), (lab.MinChars, {"min_chars": 10}), Tokenize, Pack)
    result = quiet(run_of_objects(corpus, *stages))
    m = result.manifest
    assert m.stages["min_chars"].dropped == {"too_short": len(SHORT)}
    assert {r["id"] for r in result.rejects("min_chars")} == set(SHORT)
    assert m.config["stages"][1] == {"api_lab_stages:MinChars": {"min_chars": 10}}
    with pytest.raises(ConfigError, match=r"^stages\[1\]\.api_lab_stages:MinChars\.min_chars"):
        run_of_objects(corpus, (LangId, LANGID), (lab.MinChars, {"min_chars": 0}), Pack).plan()

    module.write_text(STAGE_MODULE.replace('"LMN"', '"LN"'), encoding="utf-8")
    lab = importlib.reload(lab)
    stages = ((LangId, LANGID), (lab.MinChars, {"min_chars": 10}), Tokenize, Pack)
    assert run_of_objects(corpus, *stages).plan().key != m.run_key


def test_the_readers_give_back_what_the_run_kept_and_dropped(corpus):
    every = {**TEXTS, **SHORT}
    no_ru = (LangId, {**LANGID, "allowed_languages": sorted(set(TEXTS) - {"ru"})})
    tokenized = quiet(run_of_objects(corpus, no_ru, Tokenize, Pack))
    kept = {d["id"]: d for d in tokenized.documents()}
    dropped = {r["id"]: r for r in tokenized.rejects()}
    assert set(TEXTS) - {"ru"} <= set(kept) and "ru" in dropped
    assert set(kept) | set(dropped) == set(every) and not set(kept) & set(dropped)
    assert {k: d["text"] for k, d in kept.items()} == {k: every[k] for k in kept}  # decoded
    assert {k: r["text"] for k, r in dropped.items()} == {k: every[k] for k in dropped}
    assert dropped["ru"]["reason"] == "language_not_allowed"
    assert sum(len(d["tokens"]) for d in kept.values()) == tokenized.manifest.totals.tokens.real
    assert {d["source"] for d in kept.values()} == {"web"}
    assert list(tokenized.documents(source="other")) == []
    assert list(tokenized.rejects("input")) == []

    written = quiet(run_of_objects(corpus, no_ru, Write))
    docs = {d["id"]: d for d in written.documents()}
    assert {k: d["text"] for k, d in docs.items()} == {k: every[k] for k in kept}
    assert all(docs[k]["language"] == k for k in set(TEXTS) - {"ru"})
    assert written.manifest.documents.docs == len(kept)


def test_a_second_run_is_up_to_date(corpus):
    first = quiet(run_of_objects(corpus))
    lines = []
    with restored_logging():
        again = run_of_objects(corpus).run(echo=lines.append, report=False)
    assert lines[0].startswith("up to date: ") and again.run_key == first.run_key


def sample_run(configs: Path) -> Run:
    """configs/sample.yaml's run, built from objects (not by reading the YAML)."""
    from gristmill.stages.dedup.exact import ExactDedup
    from gristmill.stages.dedup.minhash.stage import MinHashDedup
    from gristmill.stages.dedup.url import UrlDedup
    from gristmill.stages.pii.stage import Pii
    from gristmill.stages.quality.stage import Quality
    from gristmill.stages.safety import Safety

    languages = ["en", "de", "fr", "es", "ru", "zh", "ja"]
    stages = [
        (LangId, {"allowed_languages": languages, "min_score": 0.65}),
        *(Quality, Safety, ExactDedup, MinHashDedup, UrlDedup, Pii),
        (Tokenize, {"tokenizer": "gpt2"}),
        Pack,
    ]
    sources = [
        Source("web", ["../sample_data/web"], origin="real"),
        Source("synthetic", ["../sample_data/synthetic"], origin="synthetic"),
    ]
    return Run(sources, stages, "../out/sample", configs, tasks=4, workers=2, keep_rejected=True)


def file_hashes(out: Path) -> dict[str, str]:
    import hashlib

    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for folder in ("tokens", "rejected", "index")
        for p in sorted((out / folder).rglob("*"))
        if p.is_file()
    }


@pytest.mark.slow
def test_the_sample_run_from_python_is_the_yaml_run(tmp_path):
    """configs/sample.yaml run from its file, then the same run built in Python into the same
    output folder: the same run key and byte-identical shards and rejects; then up to date."""
    from tests.conftest import run_quietly

    repo = Path(__file__).resolve().parents[2]
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "sample.yaml").write_bytes((repo / "configs/sample.yaml").read_bytes())
    (tmp_path / "sample_data").symlink_to(repo / "sample_data")
    from_yaml = run_quietly(tmp_path / "configs" / "sample.yaml")
    yaml_files = file_hashes(tmp_path / "out" / "sample")
    (tmp_path / "out" / "sample").rename(tmp_path / "out" / "from_yaml")

    python = sample_run(tmp_path / "configs")
    result = quiet(python)
    assert result.folder == tmp_path / "out" / "sample"
    assert result.run_key == from_yaml["run_key"]
    assert any(p.startswith("tokens/synthetic/") for p in yaml_files)
    assert file_hashes(result.folder) == yaml_files
    lines = []
    with restored_logging():
        python.run(echo=lines.append, report=False)
    assert lines[0].startswith("up to date: ")


SCRIPT = f"""
import sys

from gristmill.pipeline.api import Run, Source
{STAGE_MODULE}

run = Run([Source("web", ["data"])], ["langid", (MinChars, {{"min_chars": 10}}), "write"], "out")
print(run.plan().key)
"""


def test_a_class_of_the_running_script_is_in_the_key(corpus):
    """A stage class defined in the script that runs (`__main__`): its file is the code."""
    import subprocess

    script = corpus / "my_run.py"

    def key_of(text: str) -> str:
        script.write_text(text, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)], cwd=corpus, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split()[-1]

    first = key_of(SCRIPT)
    assert key_of(SCRIPT) == first
    assert key_of(SCRIPT.replace('"LMN"', '"LN"')) != first


@pytest.fixture
def lab_on_pythonpath(corpus, monkeypatch) -> Path:
    """The module of a stage of one's own, its folder on PYTHONPATH before Ray starts, as Ray's
    workers import a plug-in's."""
    lab = corpus / "lab"
    lab.mkdir()
    (lab / "api_ray_stages.py").write_text(STAGE_MODULE, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(lab), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(str(lab))
    return lab


@pytest.mark.cluster
def test_ray_runs_a_class_of_ones_own_as_local_does(corpus, lab_on_pythonpath, local_ray):
    lab = importlib.import_module("api_ray_stages")
    stages = ((LangId, LANGID), (lab.MinChars, {"min_chars": 10}), Tokenize, Pack)
    local = quiet(run_of_objects(corpus, *stages))
    local_files = file_hashes(local.folder)
    local.folder.rename(corpus / "local")
    on_ray = quiet(run_of_objects(corpus, *stages, ray={"num_cpus": 2}), executor="ray")
    assert on_ray.run_key == local.run_key
    assert file_hashes(on_ray.folder) == local_files
    assert on_ray.manifest.stages["min_chars"].dropped == {"too_short": len(SHORT)}
