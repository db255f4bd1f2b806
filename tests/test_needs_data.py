"""`@pytest.mark.needs_data(...)` (tests/conftest.py): a skip without the data, a failure when
REQUIRE_DATA=1 (CI), and nothing at all when the data is there."""

import pytest

from tests.conftest import pytest_runtest_setup


class Item:
    """The one thing the hook reads from a test item: its markers."""

    def __init__(self, *paths: str):
        self.marks = [pytest.mark.needs_data(*paths).mark]

    def iter_markers(self, name):
        return (m for m in self.marks if m.name == name)


@pytest.fixture
def data_at(tmp_path, monkeypatch):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "here.jsonl").write_text("{}\n")
    monkeypatch.setattr("tests.conftest.SHARED_DATA", tmp_path)
    return tmp_path


def test_missing_data_skips_with_the_path(data_at, monkeypatch):
    monkeypatch.delenv("REQUIRE_DATA", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"\.\./shared/data/corpus/gone\.jsonl"):
        pytest_runtest_setup(Item("corpus/here.jsonl", "corpus/gone.jsonl"))


def test_missing_data_fails_under_require_data(data_at, monkeypatch):
    monkeypatch.setenv("REQUIRE_DATA", "1")
    with pytest.raises(pytest.fail.Exception, match=r"gone\.jsonl is absent and REQUIRE_DATA=1"):
        pytest_runtest_setup(Item("corpus/gone.jsonl"))


@pytest.mark.parametrize("require", ["1", "0"])
def test_present_data_runs(data_at, monkeypatch, require):
    monkeypatch.setenv("REQUIRE_DATA", require)
    assert pytest_runtest_setup(Item("corpus/here.jsonl", "corpus")) is None
