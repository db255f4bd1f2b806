"""The docs stay in step with the code: generated parameter tables are current, every stage and
every command has its documentation, and the README's links resolve."""

import re
from pathlib import Path

from gristmill.pipeline.cli.docs import BEGIN, END, params_table, render
from gristmill.pipeline.cli.docs import main as docs_main
from gristmill.pipeline.cli.main import cli
from gristmill.stages.registry import STAGES

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


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
    assert "langid.md: parameter table is stale" in capsys.readouterr().err


def test_every_parameter_has_a_description():
    for name, cls in STAGES.items():
        for field, info in cls.Params.model_fields.items():
            assert info.description, f"{name}.{field} has no description"
        table = params_table(cls)
        for field in cls.Params.model_fields:
            assert f"| `{field}` |" in table


def test_render_keeps_the_prose_around_the_table():
    cls = STAGES["langid"]
    page = f"# langid\n\nprose before\n\n{BEGIN}\nold\n{END}\n\nafter\n"
    out = render(page, cls, "p")
    assert out.startswith("# langid\n\nprose before\n\n") and out.endswith("\n\nafter\n")
    assert "old" not in out and "| `min_score` |" in out


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
