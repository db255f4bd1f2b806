"""The per-source funnel of a run: what every stage took in and let out for each source, in
the manifest, the end-of-run summary, `inspect` and the report."""

from __future__ import annotations

import pytest

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.funnel import funnel_lines, source_funnel
from gristmill.pipeline.output.inspect import describe_run
from tests.conftest import make_tiny_run, restored_logging

WEB = [
    "The quick brown fox jumps over the lazy dog.",
    "Paris is the capital and largest city of France.",
    "the QUICK brown fox   jumps over the lazy dog.",
    "Rivers carry water from mountains down to the sea.",
]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple:
    from gristmill.pipeline.report.html import after_run
    from gristmill.pipeline.run.runner import run

    config = make_tiny_run(tmp_path_factory.mktemp("funnel"))
    said: list[str] = []
    with restored_logging():
        run(str(config), echo=said.append, after=after_run)
    return config.parent / "out", said


def test_the_manifest_has_each_stage_per_source_and_it_adds_up(finished):
    out, _ = finished
    m = mf.load(out)
    assert m.funnel and set(m.funnel) <= set(m.stages)
    for stage, rows in m.funnel.items():
        assert set(rows) == {"web", "syn"}, stage
        counts = m.stages[stage]
        assert sum(r[0] for r in rows.values()) == counts.seen
        assert sum(r[2] for r in rows.values()) == counts.kept
        assert all(d_out <= d_in for d_in, _, d_out, _ in rows.values())
    first = next(iter(m.funnel.values()))
    assert first["web"][0] == 4 and first["syn"][0] == 2  # syn's empty record never read
    assert first["web"][1] == sum(len(t) for t in WEB)  # characters: code points
    assert m.funnel["exact_dedup"]["syn"][2] == 1  # s2 is a duplicate of w1


def test_the_summary_inspect_and_report_show_it(finished):
    out, said = finished
    m = mf.load(out)
    lines = funnel_lines(m)
    assert lines[0].split()[:3] == ["per", "source", "source"]
    assert all(line in said for line in lines)
    shown = list(describe_run(out))
    assert "funnel, per stage and source:" in shown and f"  {lines[1]}" in shown
    html = (out / "report.html").read_text()
    assert "Funnel per source" in html and "<td>syn</td>" in html


def test_source_funnel_sums_the_stats_keys():
    steps = {
        "langid": {
            "seen": 5,
            "funnel/web/docs_in": 3,
            "funnel/web/docs_out": 2,
            "funnel/x/chars_in": 9,
        },
        "tokenize": {"tokens": 7},
    }
    assert source_funnel(steps) == {"langid": {"web": [3, 0, 2, 0], "x": [0, 9, 0, 0]}}
