"""Every recipe in configs/recipes/ has its page in docs/recipes/, listed in the index, and a
test that runs it; every page names the config it explains and the model to bring."""

from __future__ import annotations

from tests.recipes.recipes import RECIPES, REPO

PAGES = REPO / "docs" / "recipes"


def names() -> list[str]:
    return sorted(p.stem for p in RECIPES.glob("*.yaml"))


def test_every_recipe_has_a_page_an_index_row_and_a_test():
    assert {"fineweb", "fineweb-edu", "fineweb-2", "dclm"} <= set(names())
    index = (PAGES / "README.md").read_text(encoding="utf-8")
    for name in names():
        page = (PAGES / f"{name}.md").read_text(encoding="utf-8")
        assert f"configs/recipes/{name}.yaml" in page, name
        assert "**Model to bring:**" in page and "| # | published step | gristmill |" in page
        assert f"({name}.md)" in index and f"configs/recipes/{name}.yaml" in index, name
        test = REPO / "tests" / "recipes" / f"test_{name.replace('-', '_')}.py"
        assert test.is_file(), test


def test_the_readme_links_the_recipes():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(docs/recipes/README.md)" in readme
