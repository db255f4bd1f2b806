"""The docs stay in step with the code: generated parameter tables are current, every stage and
every command has its documentation, the README's links resolve, and every Python block of
README.md and docs/ runs."""

import linecache
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.docs import (
    BEGIN,
    END,
    META_BEGIN,
    META_END,
    metadata_table,
    param_rows,
    params_table,
    render,
)
from gristmill.pipeline.cli.docs import main as docs_main
from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.extras import EXTRA_OF
from gristmill.stages.errors import GristmillError
from gristmill.stages.registry import STAGES
from tests.conftest import run_quietly

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]
FENCE = re.compile(r"^\s*(`{3,}|~{3,})([\w+-]*)")
# the folders a page's code may read: made by `run_tree`, as `make run`, `gristmill run
# configs/mix.yaml` and `gristmill mix configs/mix.yaml` make them in a clone
RUN_FOLDERS = ("out/sample", "out/mix")


def test_parameter_tables_are_current(capsys):
    assert docs_main([str(DOCS), "--check"]) == 0, capsys.readouterr().err


def test_a_stale_table_is_found(tmp_path, capsys):
    """A page whose table lacks a parameter fails the check, naming the page."""
    (tmp_path / "stages").mkdir()
    for name in STAGES:
        page = (DOCS / "stages" / f"{name}.md").read_text(encoding="utf-8")
        if name == "langid":
            page = page.replace("| `batch_size` |", "| `old_name` |")
        (tmp_path / "stages" / f"{name}.md").write_text(page, encoding="utf-8")
    assert docs_main([str(tmp_path), "--check"]) == 1
    assert "langid.md: parameter or metadata table is stale" in capsys.readouterr().err


def test_a_stale_metadata_table_is_found(tmp_path, capsys):
    """A page whose metadata table lacks a key the stage writes fails the check."""
    (tmp_path / "stages").mkdir()
    for name in STAGES:
        page = (DOCS / "stages" / f"{name}.md").read_text(encoding="utf-8")
        if name == "pii":
            page = "\n".join(x for x in page.split("\n") if not x.startswith("| `pii_counts` |"))
        (tmp_path / "stages" / f"{name}.md").write_text(page, encoding="utf-8")
    assert docs_main([str(tmp_path), "--check"]) == 1
    assert "pii.md: parameter or metadata table is stale" in capsys.readouterr().err


def test_every_declared_key_has_a_meaning_and_a_row():
    for name, cls in STAGES.items():
        table = metadata_table(cls)
        for f in (*cls.reads, *cls.writes, *cls.drops):
            assert f.doc, f"{name}: metadata {f.name} has no doc"
            assert f"| `{f.name}` |" in table


def test_every_parameter_has_a_description():
    for name, cls in STAGES.items():
        for field, info in cls.Params.model_fields.items():
            assert info.description, f"{name}.{field} has no description"
        table = params_table(cls)
        for field in cls.Params.model_fields:
            assert f"| `{field}` |" in table


def test_a_default_factory_is_a_default_not_required():
    from pydantic import Field

    from gristmill.stages.base import StageParams

    class Params(StageParams):
        words: list[str] = Field(default_factory=lambda: ["a", "b"], description="w")
        limit: int = Field(description="l")

    class Plug:  # param_rows reads only the class's Params
        pass

    Plug.Params = Params
    rows = {name: default for name, _, default, _ in param_rows(Plug)}
    assert rows == {"words": '`["a", "b"]`', "limit": "(required)"}


def test_render_keeps_the_prose_around_the_table():
    cls = STAGES["langid"]
    page = f"# langid\n\nprose before\n\n{BEGIN}\nold\n{END}\n\nafter\n"
    page += f"{META_BEGIN}\nstale\n{META_END}\nend\n"
    out = render(page, cls, "p")
    assert out.startswith("# langid\n\nprose before\n\n") and out.endswith("\nend\n")
    assert "old" not in out and "| `min_score` |" in out
    assert "stale" not in out and "| `language_score` | `float` | writes |" in out


def test_every_command_is_documented():
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    for name in cli.commands:
        assert f"gristmill {name}" in text, name


def test_readme_is_a_front_page_whose_links_resolve():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "make run" in readme and "make test" in readme
    links = re.findall(r"\]\(((?:docs/)[^)#]+)", readme)
    assert links
    for link in links:
        assert (REPO / link).is_file(), link
    for name in STAGES:
        assert (DOCS / "stages" / f"{name}.md").is_file()


def fenced_blocks(text: str) -> list[tuple[str, int, str]]:
    """(info word, first line's number, code) of every fenced block of a Markdown text."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next(
            (j for j in range(i + 1, len(lines)) if lines[j].strip() == m.group(1)), len(lines)
        )
        blocks.append((m.group(2), i + 2, "\n".join(lines[i + 1 : end])))
        i = end + 1
    return blocks


def python_blocks(page: Path) -> list[tuple[int, str]]:
    blocks = fenced_blocks(page.read_text(encoding="utf-8"))
    return [(line, code) for info, line, code in blocks if info in ("python", "py")]


SNIPPET_PAGES = [page for page in PAGES if python_blocks(page)]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_block_names_its_language(page):
    """So that no Python hides in a block the snippet test does not run: a block that is not
    meant to run says what it is (console, text, yaml)."""
    blocks = fenced_blocks(page.read_text(encoding="utf-8"))
    assert all(info for info, _, _ in blocks), [line for info, line, _ in blocks if not info]


def test_fenced_blocks_are_found():
    text = "a\n```python\nx = 1\n```\n\n```console\n$ ls\n```\n````text\n```\n````\n"
    assert fenced_blocks(text) == [
        ("python", 3, "x = 1"),
        ("console", 7, "$ ls"),
        ("text", 10, "```"),
    ]
    assert {"emitter.md", "writing-a-stage.md"} <= {page.name for page in SNIPPET_PAGES}


@pytest.fixture(scope="module")
def run_tree(tmp_path_factory) -> Path:
    """A folder laid out as a clone is after `make run`, `gristmill run configs/mix.yaml` and
    `gristmill mix configs/mix.yaml`: configs/, sample_data/ and the runs' out/."""
    root = tmp_path_factory.mktemp("docs_runs")
    (root / "configs").mkdir()
    for name in ("sample.yaml", "mix.yaml"):
        shutil.copy(REPO / "configs" / name, root / "configs" / name)
    (root / "sample_data").symlink_to(REPO / "sample_data")
    run_quietly(root / "configs" / "sample.yaml")
    run_quietly(root / "configs" / "mix.yaml")
    result = CliRunner().invoke(cli, ["mix", str(root / "configs" / "mix.yaml")])
    assert result.exit_code == 0, result.output
    return root


def reads_a_run(page: Path) -> bool:
    """Whether the page's snippets wait for `run_tree`'s runs, or make runs of their own."""
    if page.name in MAKES_RUNS:
        return True
    return any(folder in code for _, code in python_blocks(page) for folder in RUN_FOLDERS)


MAKES_RUNS = {"publishing.md"}  # curates a run, then tokenizes it twice
RUNS_OWN = {"python.md"}  # runs of its own on its own few documents: slow, with no `run_tree`


@pytest.mark.parametrize(
    "page",
    # a page that reads or makes runs: slow
    [
        pytest.param(p, marks=pytest.mark.slow) if reads_a_run(p) or p.name in RUNS_OWN else p
        for p in SNIPPET_PAGES
    ],
    ids=lambda page: page.name,
)
def test_python_blocks_run(page, tmp_path, monkeypatch, request):
    """A page's Python blocks run in order, in one namespace, in an empty folder; a page whose
    code reads a run (RUN_FOLDERS) finds the runs of `run_tree` there. A block that needs a
    missing extra (torch) skips the page, naming it."""
    blocks = python_blocks(page)
    if reads_a_run(page):
        tree = request.getfixturevalue("run_tree")
        for name in ("configs", "sample_data", "out"):
            (tmp_path / name).symlink_to(tree / name)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    for line, code in blocks:
        where = f"{page.relative_to(REPO)}:{line}"
        linecache.cache[where] = (len(code), None, code.splitlines(keepends=True), where)
        try:
            exec(compile(code, where, "exec"), namespace)
        except GristmillError as e:
            if any(
                f"needs {module}, in the `{extra}` extra" in str(e)
                for module, extra in EXTRA_OF.items()
            ):
                pytest.skip(f"{where}: {e}")
            raise
