"""The run key's code print (pipeline/run/fingerprint.py): made of the code a config's stages
and the phase compiler import, so a change elsewhere leaves a run up to date, and a change in
that code (or its data, or a library's version) makes it another run."""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from gristmill.pipeline.run import fingerprint as fp
from gristmill.stages.registry import STAGES, get_stage, implicit_first, is_global
from tests.pipeline.conftest import REPO, sample_config_at
from tests.stages.plugin_package import dist_info, forget

EXACT = ("exact_dedup", "tokenize", "pack")
PII = ("pii", "tokenize", "pack")


def classes(names) -> tuple:
    return (*implicit_first(), *(get_stage(n) for n in names))


def digest(names, roots) -> str:
    parts = fp.code_parts(classes(names), roots)
    return orjson.dumps(parts, option=orjson.OPT_SORT_KEYS).decode()


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> dict[str, Path]:
    """A copy of stages/ and pipeline/, as the roots the print reads gristmill from."""
    root = tmp_path_factory.mktemp("code")
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ("stages", "pipeline"):
        shutil.copytree(REPO / folder, root / folder, ignore=ignore)
    return {"gristmill.stages": root / "stages", "gristmill.pipeline": root / "pipeline"}


def edited(path: Path, text: bytes = b"\n# a comment\n"):
    """Appends `text` to `path`; the context's exit puts the file back."""

    class Edit:
        def __enter__(self):
            self.original = path.read_bytes()
            path.write_bytes(self.original + text)

        def __exit__(self, *exc):
            path.write_bytes(self.original)

    return Edit()


def test_the_print_is_the_installed_code_s():
    roots = fp.installed_roots(classes(EXACT))
    assert roots["gristmill.stages"] == (REPO / "stages").resolve()
    assert fp.code_print(classes(EXACT)) != fp.code_print(classes(PII))


@pytest.mark.parametrize("name", list(STAGES))
def test_a_stage_s_print_covers_its_steps_and_the_shard_writer(name):
    """Every module of a stage's steps (a global stage's map, reduces and filter) and the
    phase compiler, reader and shard format are in the print of a run with that stage."""
    from gristmill.pipeline.run import phases
    from gristmill.stages.formats import shards
    from gristmill.stages.read import sources

    cls = get_stage(name)
    modules = {inspect.getmodule(cls), phases, sources}
    if is_global(cls):
        required = {  # parameters without a default
            "select": {"keep_top": 0.5},
            "ensemble": {"key": "ens", "scores": ["a", "b"]},
        }
        # semantic_dedup's model folder is checked as its parameters are made: none is read
        # to build the steps
        built = {"semantic_dedup": lambda: cls.Params.model_construct(model="unread")}
        params = built[name]() if name in built else cls.Params(**required.get(name, {}))
        stage = cls(params)
        steps = [stage.map_step(), *(s for s, _ in stage.reduce_steps()), stage.filter_step()]
        modules.update(inspect.getmodule(type(s)) for s in steps)
    if name == "pack":
        modules.add(shards)
    parts = fp.code_parts(classes([name]), fp.installed_roots(classes([name])))
    assert {m.__name__ for m in modules} <= set(parts["modules"])
    assert all(sha is not None for sha in parts["modules"].values())


@pytest.mark.slow
def test_a_pii_change_moves_the_key_of_a_run_with_pii_only(tree):
    exact, pii = digest(EXACT, tree), digest(PII, tree)
    for edit in ("pii/phones/shapes.py", "pii/stage.py", "data/pii/or_words.txt"):
        with edited(tree["gristmill.stages"] / edit):
            assert digest(EXACT, tree) == exact, edit
            assert digest(PII, tree) != pii, edit
    with edited(tree["gristmill.stages"] / "dedup" / "exact.py"):
        assert digest(EXACT, tree) != exact
        assert digest(PII, tree) == pii
    # the code every run uses moves every key
    for shared in ("formats/docio.py", "base.py"):
        with edited(tree["gristmill.stages"] / shared):
            assert digest(EXACT, tree) != exact and digest(PII, tree) != pii, shared
    with edited(tree["gristmill.pipeline"] / "run" / "phases.py"):
        assert digest(EXACT, tree) != exact and digest(PII, tree) != pii
    assert (digest(EXACT, tree), digest(PII, tree)) == (exact, pii)  # all put back


def test_the_data_a_stage_reads_is_in_its_print_only():
    def data(name):
        parts = fp.code_parts(classes([name]), fp.installed_roots(classes([name])))
        return {path.split("/")[2] for path in parts["data"]}

    # the language table is read by stages/base.py (a threshold by language finds a GlotLID
    # label by its ISO 639-1 code), so it is in every stage's print
    assert data("exact_dedup") == {"iso639.tsv"}
    assert data("pii") == {"pii", "iso639.tsv"}
    assert data("safety") == {"safety_domains.txt", "safety_words", "iso639.tsv"}
    assert {"stopwords", "quality_languages.yaml", "quality_fitted.yaml"} <= data("quality")


def test_no_shipped_file_falls_out_of_every_print():
    """Every entry of stages/data/ is in the print of some stage (the modules name it), and no
    file but Python's is anywhere else under stages/: nothing changes a run's bytes unseen."""
    everything = classes(STAGES)
    parts = fp.code_parts(everything, fp.installed_roots(everything))
    shipped = {p.name for p in (REPO / "stages" / "data").iterdir()}
    assert {path.split("/")[2] for path in parts["data"]} == shipped
    others = [
        p
        for p in (REPO / "stages").rglob("*")
        if p.is_file() and p.suffix != ".py" and not {"data", "__pycache__"} & set(p.parts)
    ]
    assert others == []


def test_libraries_are_in_the_print_by_their_version():
    from importlib.metadata import version

    pii = fp.code_parts(classes(PII), fp.installed_roots(classes(PII)))["libraries"]
    exact = fp.code_parts(classes(EXACT), fp.installed_roots(classes(EXACT)))["libraries"]
    assert pii["phonenumbers"] == f"phonenumbers {version('phonenumbers')}"
    assert "phonenumbers" not in exact
    assert exact["datatrove"] == f"datatrove {version('datatrove')}"  # the reader's
    assert not {"os", "re", "json", "__future__"} & set(exact)  # the standard library: none


PRINT = """
import sys
from gristmill.pipeline.run import fingerprint as fp
from gristmill.stages.registry import STAGES, get_stage, implicit_first

if sys.argv[1] == "all":  # every stage imported first: the print must not care
    for name in STAGES:
        get_stage(name)
print(fp.code_print((*implicit_first(), get_stage("exact_dedup"))))
"""


@pytest.mark.slow
def test_the_print_is_the_same_in_every_process():
    here = fp.code_print(classes(["exact_dedup"]))
    for how in ("fresh", "all"):
        done = subprocess.run(
            [sys.executable, "-c", PRINT, how], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == here, how


@pytest.mark.slow
def test_a_plugin_s_package_is_in_its_print(lab):
    dist_info(lab, {"gm_short": "gm_lab.filters:Short"}, version="0.1.0")
    forget()
    cls = get_stage("gm_short")
    roots = fp.installed_roots([cls])
    assert roots["gm_lab"] == lab / "gm_lab"
    parts = fp.code_parts([cls], roots)
    # the module, the modules of its package it imports (absolute and relative), its data
    assert {"gm_lab", "gm_lab.filters", "gm_lab.counting", "gm_lab.words"} <= set(parts["modules"])
    assert "gm_lab.broken" not in parts["modules"]  # not imported by the stage
    # and the language table every stage reads through stages/base.py
    assert set(parts["data"]) == {"gm_lab/stop.txt", "gristmill.stages/data/iso639.tsv"}
    assert parts["libraries"]["gm_lab"] == "gm-lab 0.1.0"
    assert parts["libraries"]["pydantic"].startswith("pydantic ")
    before = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
    for edit in ("counting.py", "stop.txt"):
        with edited(lab / "gm_lab" / edit, b"\n"):
            after = orjson.dumps(fp.code_parts([cls], roots), option=orjson.OPT_SORT_KEYS)
            assert after != before, edit
    with edited(lab / "gm_lab" / "broken.py"):
        assert orjson.dumps(fp.code_parts([cls], roots), option=orjson.OPT_SORT_KEYS) == before
    shutil.rmtree(next(lab.glob("gm_lab-*.dist-info")))
    dist_info(lab, {"gm_short": "gm_lab.filters:Short"}, version="0.2.0")
    forget()
    assert fp.code_parts([cls], roots)["libraries"]["gm_lab"] == "gm-lab 0.2.0"


@pytest.mark.slow
def test_a_finished_run_is_up_to_date_after_a_change_in_code_it_does_not_use(tmp_path):
    """End to end, in `gristmill` processes that import a copy of gristmill: an exact_dedup-only
    run, rerun after a comment is added to a pii module, is up to date; after one is added to
    exact_dedup's module, it runs again under another key."""
    code = tmp_path / "code"
    for folder in ("stages", "pipeline", "trainer"):
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(REPO / folder, code / "gristmill" / folder, ignore=ignore)
    config = sample_config_at(tmp_path, stages=list(EXACT))
    out = tmp_path / "out"

    def run() -> str:
        cmd = [sys.executable, "-m", "gristmill.pipeline.cli.main", "run", str(config)]
        env = dict(os.environ, PYTHONPATH=str(code))
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    up_to_date = f"up to date: {out / 'manifest.json'} (same config and inputs; nothing to do)"
    assert up_to_date not in run()
    key = orjson.loads((out / "manifest.json").read_bytes())["run_key"]
    with edited(code / "gristmill" / "stages" / "pii" / "phones" / "shapes.py"):
        assert up_to_date in run().splitlines()
    with edited(code / "gristmill" / "stages" / "dedup" / "exact.py"):
        assert up_to_date not in run()
    assert orjson.loads((out / "manifest.json").read_bytes())["run_key"] != key
