"""The shipped recipes (configs/recipes/) run as they are, on the sample data they name, with
only their model paths swapped for stand-ins built in the test (and their output, and an
earlier recipe run they read, under the test's folder): `Run.from_dict` with the recipes'
folder as root resolves every other path as `gristmill run` would."""

from __future__ import annotations

import random
from pathlib import Path

import yaml

from gristmill.pipeline.api import Run, RunResult
from gristmill.stages.formats.docio import read_records
from gristmill.stages.formats.fasttext import lid176_path, load_fasttext
from gristmill.stages.quality.model import MIN_TRAIN_THREADS
from tests.conftest import restored_logging

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "configs" / "recipes"


def load(name: str) -> dict:
    return yaml.safe_load((RECIPES / f"{name}.yaml").read_text(encoding="utf-8"))


def swapped(name: str, out: Path, models: dict[str, Path], runs: dict | None = None) -> dict:
    """The recipe `name` with each model path in `models` (as the YAML writes it) replaced by a
    stand-in, its output in `out`, and each earlier run it reads (`runs`, by the YAML's path)
    taken from the test's folder. A path the YAML no longer names fails the test."""
    config, runs = load(name), runs or {}
    seen = set()
    for entry in config["stages"]:
        params = next(iter(entry.values())) if isinstance(entry, dict) else None
        if isinstance(params, dict) and params.get("model") in models:
            seen.add(params["model"])
            params["model"] = str(models[params["model"]])
    for source in config["sources"]:
        if source.get("run") in runs:
            seen.add(source["run"])
            source["run"] = str(runs[source["run"]])
    assert seen == set(models) | set(runs), f"{name}: {sorted(set(models) | set(runs) - seen)}"
    return config | {"output": str(out)}


def run(config: dict) -> RunResult:
    with restored_logging():
        return Run.from_dict(config, root=RECIPES).run(echo=None)


def rejects(result: RunResult) -> dict[str, str]:
    """id -> reason of every document a stage dropped."""
    return {r["id"]: r["reason"] for r in result.rejects() if "id" in r}  # not input's


def sample_texts(folder: str = "web") -> list[str]:
    """The texts of sample_data/<folder>'s readable records."""
    out = []
    for path in sorted((REPO / "sample_data" / folder).iterdir()):
        try:
            out += [str(r["text"]) for r in read_records(path) if r.get("text")]
        except Exception:  # noqa: BLE001 - part-broken.jsonl has malformed lines by design
            continue
    return out


def fasttext_on(path: Path, lines: list[str], **kw) -> Path:
    """A supervised fastText model trained on `lines` (`__label__x text`), saved at `path`."""
    import fasttext

    data = path.with_suffix(".txt")
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # at least 11 threads: this fastText wheel leaves part of its matrix unset with fewer and
    # training meets NaN (stages/quality/model.py)
    options = dict(dim=16, minn=1, maxn=3, wordNgrams=2, bucket=20000, epoch=20, lr=0.5)
    options |= dict(thread=MIN_TRAIN_THREADS, seed=1, verbose=0)
    model = fasttext.train_supervised(str(data), **options | kw)
    model.save_model(str(path))
    return path


def glotlid_stand_in(path: Path, labels: dict[str, str]) -> Path:
    """A GlotLID-style model (`labels`: lid.176 code -> GlotLID label) trained on the lines of
    the sample pages, each labelled with lid.176's label for its page renamed; pages of other
    languages are left out."""
    lid = load_fasttext(lid176_path())
    lines = []
    for text in sample_texts():
        (label,), _ = lid.predict(text.replace("\n", " "))
        code = label.removeprefix("__label__")
        if code in labels:
            lines += [f"__label__{labels[code]} {line}" for line in text.split("\n") if line]
    random.Random(0).shuffle(lines)
    return fasttext_on(path, lines, epoch=30, lr=1.0)
