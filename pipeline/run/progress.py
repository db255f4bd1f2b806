"""Seeing a run while it runs: a progress bar per phase, and a one-screen summary at the end.

Tasks run in other processes (the local pool's workers, Ray actors), which report nothing to
the parent. So each phase that carries documents gets a `_progress` step right after its reader
that counts documents and the characters of their text (code points: a string knows its length,
while its UTF-8 bytes would cost an encoding of every text) and rewrites
`<phase>/progress/<task>.json` (two numbers) at most twice a second; the parent polls those
files and the completion markers. That is one small file per task, whatever the executor, and
it survives a resume.

On a terminal (stderr is a TTY and `CI` is not set) a tqdm bar shows documents, docs/s, millions
of characters/s and an ETA: from documents where the phase's input count is known (every phase
after the first), else from finished tasks. Otherwise the output is plain lines: the phase, a
line every `QUIET_EVERY_S` seconds while it runs, and its totals when it ends.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from gristmill.pipeline.output.funnel import funnel_lines, nothing_kept
from gristmill.pipeline.output.manifest import MANIFEST, Manifest, StageCounts
from gristmill.pipeline.run.executors.base import completed_tasks
from gristmill.pipeline.run.meter import cpu_words
from gristmill.pipeline.run.observe import RunObserver, RunState
from gristmill.pipeline.run.phases import AFTER_READ, Phase, Steps
from gristmill.stages.base import LIVE
from gristmill.stages.formats.atomic import write_bytes
from gristmill.stages.resources import DEFAULT

PROGRESS = "progress"
WRITE_EVERY_S = 0.5
POLL_EVERY_S = 0.25
QUIET_EVERY_S = 30.0


class CountProgress(PipelineStep):
    """Pass-through step: documents and characters of text seen by this task so far."""

    name, type = "_progress", "work"

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = folder

    def _write(self, rank: int, docs: int, chars: int, done: bool) -> None:
        path = self.folder / f"{rank:05d}.json"
        write_bytes(path, orjson.dumps({"docs": docs, "chars": chars, "done": done}))

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        self.folder.mkdir(parents=True, exist_ok=True)
        docs = chars = 0
        last = time.monotonic()
        for doc in data or ():
            docs += 1
            chars += len(doc.text)
            if docs % 64 == 0 and time.monotonic() - last > WRITE_EVERY_S:
                self._write(rank, docs, chars, False)
                last = time.monotonic()
            yield doc
        self._write(rank, docs, chars, True)


def read_progress(phase_dir: Path) -> tuple[int, int]:
    """(documents, characters) counted so far by the tasks of a phase."""
    docs = chars = 0
    for f in (phase_dir / PROGRESS).glob("*.json"):
        try:
            p = orjson.loads(f.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue  # replaced while we read it: the next poll gets it
        # a run written before progress counted characters has none: its report shows 0
        docs, chars = docs + p["docs"], chars + p.get("chars", 0)
    return docs, chars


def read_live(work: Path) -> dict[str, int]:
    """The running counters stages write (`stages/base.py` LIVE: generate's prompts and
    generated tokens), summed over stages and tasks."""
    out: dict[str, int] = {}
    for f in (work / LIVE).glob("*/*.json"):
        try:
            counters = orjson.loads(f.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        for k, v in counters.items():
            out[k] = out.get(k, 0) + int(v)
    return out


LIVE_UNITS = {"prompts": "prompts/s", "tokens": "generated tok/s"}


def live_rates(now: dict[str, int], before: dict[str, int], seconds: float) -> list[str]:
    """The rates of the live counters that moved since `before`."""
    out = []
    for key, unit in LIVE_UNITS.items():
        if (d := now.get(key, 0) - before.get(key, 0)) > 0:
            out.append(f"{d / max(seconds, 1e-9):,.1f} {unit}")
    return out


def docs_leaving(phase_dir: Path) -> int | None:
    """Documents a finished phase handed on: the `kept` of its last filtering step, summed over
    its tasks' stats (what the next phase will read). None for a phase without documents."""
    total, found = 0, False
    for f in sorted((phase_dir / "stats").glob("*.json")):
        steps = [s for s in orjson.loads(f.read_bytes()) if "kept" in s["stats"]]
        if steps:
            kept = steps[-1]["stats"]["kept"]
            total += kept["total"] if isinstance(kept, dict) else kept
            found = True
    return total if found else None


def live_terminal() -> bool:
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return sys.stderr.isatty() and not ci


def _bar_class():
    """tqdm without its monitor thread. The monitor only lowers `miniters` when updates stall,
    and this bar is refreshed by PhaseMonitor's own thread; tqdm keeps the monitor running for
    the rest of the process once a bar started it, and a thread left running when the next
    phase forks its workers sends them to a forkserver (executors/local.py: fork_is_safe)."""
    from tqdm import tqdm

    class Bar(tqdm):
        monitor_interval = 0

    return Bar


class PhaseMonitor:
    """Watches one phase from the parent: a live bar, or quiet lines through `echo`."""

    def __init__(
        self,
        label: str,
        phase_dir: Path,
        tasks: int,
        expected_docs: int | None,
        echo: Callable[[str], None],
        live: bool | None = None,
        counts_docs: bool = True,  # False for a reduce phase: it shows finished tasks
    ):
        self.label, self.dir, self.tasks, self.expected = label, phase_dir, tasks, expected_docs
        self.counts_docs = counts_docs
        self.echo = echo
        self.live = live_terminal() if live is None else live
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar = None
        self.seconds = 0.0
        self.docs = self.chars = 0

    def __enter__(self) -> PhaseMonitor:
        self._t0 = time.perf_counter()
        self._start = read_progress(self.dir)  # a resumed phase: tasks done before count too
        self._live0 = read_live(self.dir.parent)
        self._done0 = completed_tasks(self.dir)
        if self.live:
            self._bar = _bar_class()(
                total=self.expected if self.counts_docs else self.tasks,
                desc=self.label,
                unit="doc" if self.counts_docs else "task",
                file=sys.stderr,
                ncols=shutil.get_terminal_size((100, 24)).columns,  # 0 in some ptys: fall back
                smoothing=0.1,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} docs "
                "[{elapsed}<{remaining}, {rate_fmt}{postfix}]"
                if self.expected and self.counts_docs
                else "{desc}: {n_fmt} docs [{elapsed}, {rate_fmt}{postfix}]"
                if self.counts_docs
                else "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} tasks "
                "[{elapsed}<{remaining}]",
            )
        else:
            self.echo(self.label)
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _snapshot(self) -> tuple[int, int, int, float]:
        docs, chars = read_progress(self.dir)
        return docs, chars, completed_tasks(self.dir), time.perf_counter() - self._t0

    def _watch(self) -> None:
        # without a bar, the counters are read only when a line is due
        every = POLL_EVERY_S if self._bar is not None else QUIET_EVERY_S
        while not self._stop.wait(every):
            docs, chars, done, elapsed = self._snapshot()
            if self._bar is not None and not self.counts_docs:
                self._bar.n = done
                self._bar.refresh()
            elif self._bar is not None:
                self._bar.n = docs
                self._bar.set_postfix_str(self._postfix(docs, chars, done, elapsed), refresh=False)
                self._bar.refresh()
            else:
                rates = f"{self._rates(docs, chars, elapsed)}, " if self.counts_docs else ""
                self.echo(f"    ... {rates}{done}/{self.tasks} tasks")

    def _postfix(self, docs: int, chars: int, done: int, elapsed: float) -> str:
        new = chars - self._start[1]
        parts = [f"{new / 1e6 / max(elapsed, 1e-9):.2f} Mchar/s", f"tasks {done}/{self.tasks}"]
        parts[1:1] = live_rates(read_live(self.dir.parent), self._live0, elapsed)
        ran = done - self._done0
        if not self.expected and ran > 0 and done < self.tasks:  # ETA from finished tasks
            parts.append(f"ETA ~{_clock(elapsed / ran * (self.tasks - done))}")
        return ", ".join(parts)

    def _rates(self, docs: int, chars: int, elapsed: float) -> str:
        d, c, s = docs - self._start[0], chars - self._start[1], max(elapsed, 1e-9)
        rate = f"{d / s:,.0f} docs/s, {c / 1e6 / s:.2f} Mchar/s"
        rate += "".join(f", {r}" for r in live_rates(read_live(self.dir.parent), self._live0, s))
        if not d and self._start[0]:  # a resumed phase whose tasks all finished before
            rate = "finished by an earlier run"
        return f"{docs:,} docs, {chars / 1e6:,.1f} Mchar ({rate})"

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.docs, self.chars, done, self.seconds = self._snapshot()
        if self._bar is not None:
            self._bar.n = self.docs if self.counts_docs else done
            if self.counts_docs:
                self._bar.set_postfix_str(self._postfix(self.docs, self.chars, done, self.seconds))
            self._bar.close()
        elif exc_type is None:
            what = self._rates(self.docs, self.chars, self.seconds)
            if not self.counts_docs:
                what = f"{done}/{self.tasks} tasks"
            self.echo(f"    done in {self.seconds:.1f} s: {what}")


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds + 0.5), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def summary_lines(stages: dict[str, StageCounts], phases: dict[str, dict], cpu: dict | None = None):
    """The top of the end-of-run screen: documents in and out and tokens per stage (the
    manifest's `stages`), then time
    and rates per phase (the runner adds where the outputs are). With `cpu` (the manifest's
    `timing.cpu`) each stage and phase also shows its CPU-seconds summed over tasks, and a last
    line the run's total."""
    stage_cpu = (cpu or {}).get("stages", {})
    phase_cpu = (cpu or {}).get("phases", {})
    cpu_col = f"{'CPU s':>9}" if cpu else ""
    per_mb = f"{'CPU s/MB':>10}" if cpu and "input_mb" in cpu else ""
    yield f"{'stage':<28}{'seen':>10}{'kept':>10}{'dropped':>10}{'tokens':>12}{cpu_col}{per_mb}"
    for name, s in stages.items():
        if not s.filters:
            continue  # a reduce step: no documents pass through it
        tokens = f"{s.counters['tokens']:,}" if "tokens" in s.counters else ""
        dropped = sum((s.dropped or {}).values())
        c = f"{stage_cpu[name]['cpu_s']:>9.1f}" if name in stage_cpu else ""
        c += f"{stage_cpu[name]['cpu_s_per_mb']:>10.3f}" if c and per_mb else ""
        yield f"{name:<28}{s.seen:>10,}{s.kept:>10,}{dropped:>10,}{tokens:>12}{c}"
    yield f"{'phase':<28}{'seconds':>10}{cpu_col}{'docs':>10}{'docs/s':>10}{'Mchar/s':>12}"
    for name, p in phases.items():
        secs = max(p["seconds"], 1e-9)
        rates = ""
        if p["docs"]:
            rates = f"{p['docs']:>10,}{p['docs'] / secs:>10,.0f}{p['chars'] / 1e6 / secs:>12.2f}"
        c = f"{phase_cpu[name]['cpu_s']:>9.1f}" if name in phase_cpu else " " * len(cpu_col)
        yield f"{name:<28}{p['seconds']:>10.1f}{c}{rates}"
    if cpu:
        peak = max((p["peak_rss_mb"] for p in phase_cpu.values()), default=0.0)
        yield f"CPU: {cpu_words(cpu)}; peak RSS of a worker {peak:,.0f} MB"
        if per_mb:
            mb = cpu["input_mb"]
            yield f"cost: {cpu['cpu_s_per_mb']:,.3f} CPU-s in tasks per MB of input ({mb:,.2f} MB)"


def output_lines(out: Path | str, manifest: Manifest) -> Iterator[str]:
    """The bottom of the end-of-run screen (also of an up-to-date rerun's): what was kept and
    where the outputs are."""
    docs, toks, written = manifest.totals.docs, manifest.totals.tokens, manifest.documents
    if not manifest.tokenized:  # a run that ends with `write`
        yield f"kept {written.docs:,} documents (not tokenized)"
    else:
        yield (
            f"kept {docs.real + docs.synthetic:,} documents, "
            f"{toks.real + toks.synthetic:,} tokens "
            f"(real {toks.real:,}, synthetic {toks.synthetic:,})"
        )
        yield f"token shards: {out}/tokens ({_count(len(manifest.shards), 'shard')})"
    if written:
        files = _count(len(written.files), f"{written.format} file")
        yield f"documents:    {out}/documents ({files}, {written.docs:,} documents)"
    yield f"manifest:     {out}/{MANIFEST}"
    yield from manifest.report_lines()
    if manifest.rejected:
        n = sum(s.seen - s.kept for s in manifest.stages.values() if s.filters)
        yield f"rejected:     {out}/rejected ({n:,} documents with reasons)"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class Progress(RunObserver):
    """The `_progress` counters after each phase's reader (a reduce phase carries no documents:
    its bar counts tasks), a monitor per phase, and the summary the runner prints at the end
    (`summary`)."""

    def __init__(self, echo: Callable[[str], None], shown: str):
        self.echo, self.shown = echo, shown  # `shown`: where the outputs are, folder or URL
        self.summary: list[str] = []  # the end-of-run screen, once the run ended
        self.expected: int | None = None  # documents the next phase reads, once known
        self.seen: dict[str, dict] = {}
        self.monitor: PhaseMonitor | None = None

    steps = (Steps(AFTER_READ, lambda phase, work: [CountProgress(work / phase.name / PROGRESS)]),)

    def on_phase_start(self, run: RunState, index: int, phase: Phase) -> None:
        label = (
            f"[{index}/{len(run.plan.phases)}] {phase.name}: {_count(phase.tasks, 'task')}, "
            f"{_count(run.plan.run.workers, 'worker')}"
        )
        if phase.resources != DEFAULT:  # what each task asked for (stages/resources.py)
            label += f", {phase.resources.words()} a task"
        moves_docs = any(isinstance(s, CountProgress) for s in phase.steps)
        self.monitor = PhaseMonitor(
            label,
            phase.folder,
            phase.tasks,
            self.expected,
            self.echo,
            counts_docs=moves_docs,
        )
        self.monitor.__enter__()

    def on_phase_end(self, run: RunState, phase: Phase, failed: bool) -> None:
        mon, self.monitor = self.monitor, None
        mon.__exit__(Exception if failed else None, None, None)
        self.seen[phase.name] = {"seconds": mon.seconds, "docs": mon.docs, "chars": mon.chars}
        if (n := docs_leaving(phase.folder)) is not None:
            self.expected = n

    def on_run_end(self, run: RunState) -> None:
        """The end-of-run screen, printed by the runner once the outputs are where the user
        reads them (published)."""
        self.summary = [
            *summary_lines(run.manifest.stages, self.seen, run.timing["cpu"]),
            *funnel_lines(run.manifest),
            *finished_lines(self.shown, run.manifest, run.closing),
        ]


def finished_lines(shown: str, manifest: Manifest, closing: list[str]) -> list[str]:
    """Where a finished run's outputs are (`shown`), `closing` (the report), and a warning
    when it kept nothing, last, where it is seen."""
    why = nothing_kept(manifest, shown)
    return [*output_lines(shown, manifest), *closing, *([f"warning: {why}"] if why else [])]
