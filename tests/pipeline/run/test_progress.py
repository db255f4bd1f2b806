"""Progress: the per-task counters a phase's tasks write, what the parent reads from them, the
quiet (non-terminal) lines, and the end-of-run summary."""

from __future__ import annotations

import io
import threading

import orjson

from gristmill.pipeline.output.manifest_model import StageCounts
from gristmill.pipeline.run.executors.base import completed_tasks
from gristmill.pipeline.run.progress import (
    CountProgress,
    PhaseMonitor,
    docs_leaving,
    live_terminal,
    read_progress,
    summary_lines,
)
from tests.conftest import docs, run_step


def test_counter_passes_documents_through_and_counts_them(tmp_path):
    step = CountProgress(tmp_path / "progress")
    batch = docs("héllo", "wörld!", "")
    assert run_step(step, batch, rank=3) == batch
    record = orjson.loads((tmp_path / "progress" / "00003.json").read_bytes())
    assert record == {"docs": 3, "chars": len("héllowörld!"), "done": True}
    run_step(CountProgress(tmp_path / "progress"), docs("abc"), rank=0)
    assert read_progress(tmp_path) == (4, len("héllowörld!abc"))
    earlier = {"docs": 5, "bytes": 50, "done": True}  # a counter from before characters
    (tmp_path / "progress" / "00007.json").write_bytes(orjson.dumps(earlier))
    assert read_progress(tmp_path) == (9, len("héllowörld!abc"))


def test_docs_leaving_a_phase_is_its_last_filters_kept(tmp_path):
    (tmp_path / "stats").mkdir()
    for rank, kept in enumerate((5, 7)):
        steps = [
            {"name": "reader: input", "stats": {"seen": 9, "kept": 9}},
            {"name": "work: _progress", "stats": {}},
            {"name": "stage: langid", "stats": {"seen": 9, "kept": {"total": kept}}},
        ]
        (tmp_path / "stats" / f"{rank:05d}.json").write_bytes(orjson.dumps(steps))
    assert docs_leaving(tmp_path) == 12
    assert docs_leaving(tmp_path / "nothing") is None


def test_quiet_monitor_prints_the_phase_and_its_totals(tmp_path):
    lines: list[str] = []
    with PhaseMonitor("[1/1] 01-x", tmp_path, 2, None, lines.append, live=False) as mon:
        run_step(CountProgress(tmp_path / "progress"), docs("a" * 1000, "b" * 1000), rank=0)
        (tmp_path / "completions").mkdir()
        (tmp_path / "completions" / "00000").touch()
    assert (mon.docs, mon.chars) == (2, 2000) and completed_tasks(tmp_path) == 1
    assert lines[0] == "[1/1] 01-x"
    assert lines[1].startswith("    done in ") and "2 docs, 0.0 Mchar (" in lines[1]


def test_a_phase_finished_by_an_earlier_run_shows_no_zero_rates(tmp_path):
    run_step(CountProgress(tmp_path / "progress"), docs("a" * 1000, "b" * 1000), rank=0)
    lines: list[str] = []
    with PhaseMonitor("[1/1] 01-x", tmp_path, 1, None, lines.append, live=False):
        pass  # resumed: nothing left to run
    assert lines[1].endswith("2 docs, 0.0 Mchar (finished by an earlier run)"), lines
    assert "0 docs/s" not in lines[1]


def test_quiet_monitor_reads_the_counters_only_when_a_line_is_due(tmp_path, monkeypatch):
    import time

    from gristmill.pipeline.run import progress

    monkeypatch.setattr(progress, "POLL_EVERY_S", 0.001)  # a bar's pace
    monkeypatch.setattr(progress, "QUIET_EVERY_S", 0.1)
    lines: list[str] = []
    mon = PhaseMonitor("[1/1] 01-x", tmp_path, 2, None, lines.append, live=False)
    reads = []
    snapshot = mon._snapshot
    monkeypatch.setattr(mon, "_snapshot", lambda: reads.append(1) or snapshot())
    with mon:
        time.sleep(0.35)
    # three lines while it ran (0.1, 0.2, 0.3 s), one at the end: no read between them
    assert 3 <= len(reads) <= 5
    assert [x.startswith("    ... ") for x in lines[1:-1]] == [True] * (len(reads) - 1)


def test_live_bar_goes_to_stderr_only_on_a_terminal(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CI", "true")
    assert not live_terminal()  # CI, or no TTY: plain lines
    lines: list[str] = []
    fake_tty = io.StringIO()
    fake_tty.isatty = lambda: True
    monkeypatch.setattr("sys.stderr", fake_tty)
    with PhaseMonitor("[1/2] 01-x", tmp_path, 1, 4, lines.append, live=True):
        run_step(CountProgress(tmp_path / "progress"), docs("a", "b", "c", "d"), rank=0)
    assert lines == []  # the bar replaces the lines
    shown = fake_tty.getvalue()
    assert "[1/2] 01-x" in shown and "4/4 docs" in shown and "Mchar/s" in shown
    # the bar leaves no thread behind (tqdm's monitor would be): the next phase may fork
    from gristmill.pipeline.run.executors.local import fork_is_safe

    assert fork_is_safe(), threading.enumerate()


def test_summary_lists_stages_and_phases():
    stages = {
        "input": {"seen": 10, "kept": 9, "dropped": {"bad_json": 1}},
        "exact_dedup.reduce": {"duplicates": 1},
        "tokenize": {"seen": 9, "kept": 9, "dropped": {}, "tokens": 1234},
    }
    phases = {"01-map": {"seconds": 2.0, "docs": 10, "chars": 4_000_000}}
    counts = {name: StageCounts.model_validate(s) for name, s in stages.items()}
    lines = list(summary_lines(counts, phases))
    assert lines[1].split() == ["input", "10", "9", "1"]
    assert lines[2].split() == ["tokenize", "9", "9", "0", "1,234"]
    assert lines[4].split() == ["01-map", "2.0", "10", "5", "2.00"]


def test_counter_counts_characters_in_every_script(tmp_path):
    # code points, whatever their UTF-8 length (3 bytes for CJK and Thai, 2 for Arabic and
    # Cyrillic, 4 for an emoji), and a full-width comma is one character too
    texts = [
        "中文没有空格",
        "日本語です，",
        "한국어",
        "ภาษาไทย",
        "العربية",
        "हिन्दी",
        "Русский",
        "🙂",
    ]
    texts.append("ascii only")
    run_step(CountProgress(tmp_path / "progress"), docs(*texts), rank=0)
    assert read_progress(tmp_path) == (len(texts), 6 + 6 + 3 + 7 + 7 + 6 + 7 + 1 + 10)


def test_a_stages_live_counters_show_as_rates(tmp_path):
    """generate's prompts and generated tokens (`_work/<key>/live/<stage>/<task>.json`, what
    `stages.base.write_live` rewrites) as rates on the phase's line, counted from its start."""
    from gristmill.stages.base import StageContext, write_live

    phase = tmp_path / "01-x"
    phase.mkdir()
    ctx = StageContext(work=tmp_path)
    write_live(ctx, "generate", 0, {"prompts": 5, "tokens": 100})  # an earlier run's
    lines: list[str] = []
    with PhaseMonitor("[1/1] 01-x", phase, 2, None, lines.append, live=False):
        run_step(CountProgress(phase / "progress"), docs("a" * 10), rank=0)
        write_live(ctx, "generate", 0, {"prompts": 25, "tokens": 500})
        write_live(ctx, "generate", 1, {"prompts": 10, "tokens": 300})
    assert " prompts/s, " in lines[1] and " generated tok/s" in lines[1], lines
