"""`keep_work: true`: a finished run keeps its phases' work, and a changed run in the same output
folder reuses every phase whose key did not change (pipeline/run/phase_keys.py) instead of
running it again; its bytes are those of a clean run of the new config.

Which files a phase wrote is recorded as it ends (`KeepWork`, an observer of the runner): every
file under the run's folders (`rejected/`, `tokens/`, ...) and its `_work/<run key>/` that no
phase before it listed, with its size, goes to `<phase>/files.json` with the phase's key. A
phase that has its list already (a resumed run's, ended before the kill) keeps it, so a task
of the next phase, killed half-way, is never counted as this one's.

A changed run (another run key, the finished run's work kept) reuses the finished run's phases
in order while their keys equal the new run's (`find_reuse`): those that follow the same stages
with the same parameters, code and inputs, which compile to the same phases. The old run's last
phase is reused only by a run of as many stages (the same run, but for a key that changes no
byte: `workers`, the mixes). Reusing (`Reuse.apply`), in an order a kill -9 cannot break:

1. the reused phases' work files are hard-linked (copied where links are refused) into
   `_work/<new key>.reused/`, without their CPU meters (the new run did not spend that CPU);
   killed here, the old run is still finished and whole, and the next start does this again;
2. the manifest and report go, then every output file no reused phase wrote; killed here, the
   next start finds no finished run and runs clean;
3. `_work/<new key>.reused/` is renamed `_work/<new key>/`: from here on the run resumes like
   any other, the reused phases' tasks marked done; then the old run's work goes.

An output URL publishes the run and deletes the local folder, so there is no work to keep: the
config is refused (pipeline/run/plan.py).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import orjson

from gristmill.pipeline.output.layout import MANIFEST, OUTPUT_FOLDERS, REPORT, RUN_FOLDERS, WORK
from gristmill.stages.formats.atomic import write_bytes

FILES = "files.json"  # in each phase's folder of a run with `keep_work`
STAGED = ".reused"  # `_work/<key>.reused/`: a reuse being set up, not yet a run's
NOT_A_PHASES = ("run.log", "earlier/")  # the run's log, `dedup_against` indexes (made again)
METER = "/meter/"  # a phase's CPU figures: not linked, the new run did not spend them


@dataclass(frozen=True)
class Reuse:
    """The phases of the finished run `old` (its work folder) that a new run reuses."""

    old: Path
    phases: list[dict]  # each reused phase's files.json, with its `name`, in order
    rerun: list[str]  # the finished run's other phases, which run again

    def lines(self) -> list[str]:
        names = [p["name"] for p in self.phases]
        run = self.old.name
        lines = [f"  keep_work: reusing {len(names)} of run {run}'s phases ({_few(names)})"]
        if self.rerun:
            lines.append(f"  keep_work: running again {len(self.rerun)} ({_few(self.rerun)})")
        return lines

    def apply(self, out: Path, work: Path) -> None:
        """The new run's `work` folder made of the reused phases (steps 1 to 3 above)."""
        staged = work.with_name(work.name + STAGED)
        shutil.rmtree(staged, ignore_errors=True)
        kept_out: set[str] = set()
        for phase in self.phases:
            linked = {k: v for k, v in phase["work"].items() if METER not in f"/{k}"}
            for rel in linked:
                _link(self.old / rel, staged / rel)
            listed = phase | {"work": linked}
            (staged / phase["name"]).mkdir(parents=True, exist_ok=True)
            write_bytes(staged / phase["name"] / FILES, orjson.dumps(listed))
            kept_out.update(phase["out"])
        (out / MANIFEST).unlink(missing_ok=True)
        (out / REPORT).unlink(missing_ok=True)
        for name in OUTPUT_FOLDERS:
            _clear_but(out, out / name, kept_out)
        staged.rename(work)
        for other in (out / WORK).glob("*"):
            if other != work:
                shutil.rmtree(other, ignore_errors=True)


def find_reuse(out: Path, old_key: str, keys: list[str]) -> Reuse | str:
    """What the finished run `old_key` in `out` lends a run whose phase keys are `keys`
    (pipeline/run/phase_keys.py, by `upto`), or why it lends nothing: it kept no work, its
    first phase changed, or a file it listed is gone or changed size (the run is clean)."""
    old = out / WORK / old_key
    listed = [
        orjson.loads(p.read_bytes()) | {"name": p.parent.name} for p in old.glob(f"*/{FILES}")
    ]
    if not listed:
        return "the finished run kept no work (it ran without keep_work)"
    reused, rerun = [], []
    for phase in sorted(listed, key=lambda p: p["index"]):
        u, same_stages = phase["upto"], phase["upto"] == len(keys) - 1
        fits = u < len(keys) and phase["key"] == keys[u] and (not phase["last"] or same_stages)
        if fits and not rerun:
            reused.append(phase)
        else:
            rerun.append(phase["name"])
    if not reused:
        return f"its first phase changed ({rerun[0]}): every phase runs again"
    if not all(_intact(out, old, p) for p in reused):
        return "a file of its kept work is gone or changed: every phase runs again"
    return Reuse(old, reused, rerun)


def _intact(out: Path, old: Path, phase: dict) -> bool:
    """Every file the phase listed is there, of the size it had."""
    pairs = [(old / k, v) for k, v in phase["work"].items()]
    pairs += [(out / k, v) for k, v in phase["out"].items()]
    return all(p.is_file() and p.stat().st_size == size for p, size in pairs)


class KeepWork:
    """An observer of the runner (pipeline/run/observe.py): each phase's files listed as it
    ends, and at the end of the run the kept work's size, for the summary."""

    steps = ()

    def __init__(self, out: Path, work: Path, keys: list[str]):
        self.out, self.work, self.keys = out, work, keys
        self.seen: set[str] = set()  # `out:` or `work:` + a path, listed by a phase already
        self.listing = True  # whether the phases' lists can be trusted (`on_run_start`)

    def on_run_start(self, run) -> None:
        """A resumed run's lists are trusted only if every phase that ran listed its files,
        but for the one it was killed in: one that ran without `keep_work` (turned on for
        the resume), or in Slurm's jobs (whose last job runs the observers once all phases
        are done), would list another phase's files as its own. Then none is listed."""
        self.seen.clear()
        names = [p.name for p in run.plan.phases]
        ran = [n for n in names if any((self.work / n / "completions").glob("*"))]
        listed = [n for n in names if (self.work / n / FILES).exists()]
        self.listing = listed == ran[: len(listed)] and len(ran) - len(listed) <= 1
        if not self.listing:
            for n in listed:
                (self.work / n / FILES).unlink()

    def on_phase_start(self, run, index: int, phase) -> None:
        pass

    def on_phase_end(self, run, phase, failed: bool) -> None:
        if failed or not self.listing:
            return
        path = self.work / phase.name / FILES
        if path.exists():
            listed = orjson.loads(path.read_bytes())
        else:
            files = _files(self.out, self.work)
            listed = {
                "index": [p.name for p in run.plan.phases].index(phase.name),
                "key": self.keys[phase.upto],
                "upto": phase.upto,
                "last": phase.name == run.plan.phases[-1].name,
                "out": {k: v for k, v in files["out"].items() if f"out:{k}" not in self.seen},
                "work": {k: v for k, v in files["work"].items() if f"work:{k}" not in self.seen},
            }
            path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes(path, orjson.dumps(listed))
        self.seen.update(f"{side}:{k}" for side in ("out", "work") for k in listed[side])

    def on_run_end(self, run) -> None:
        size = sum(p.stat().st_size for p in self.work.rglob("*") if p.is_file())
        why = (
            "a changed run reuses the phases it does not change"
            if self.listing
            else "not reusable: not every phase listed its files as it ended (keep_work "
            "turned on for a resume, or the phases ran in Slurm's jobs)"
        )
        run.closing.insert(0, f"kept work:    {size / 1e6:,.1f} MB in {self.work} ({why})")


def _files(out: Path, work: Path) -> dict[str, dict[str, int]]:
    """Every file a phase may have written: under the run's folders, and its work folder."""
    found = {"out": {}, "work": {}}
    for side, roots, base in (("out", [out / n for n in RUN_FOLDERS], out), ("work", [work], work)):
        for root in roots:
            for p in root.rglob("*"):
                rel = p.relative_to(base).as_posix()
                if p.is_file() and not _scratch(rel):
                    found[side][rel] = p.stat().st_size
    return found


def _scratch(rel: str) -> bool:
    return rel.endswith((".tmp", f"/{FILES}")) or rel.startswith(NOT_A_PHASES)


def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:  # a filesystem without hard links
        shutil.copy2(src, dst)


def _clear_but(out: Path, folder: Path, kept: set[str]) -> None:
    """Every file under `folder` but those in `kept` (paths relative to `out`), and the
    folders left empty."""
    if not folder.is_dir():
        return
    for p in sorted(folder.rglob("*"), key=lambda p: -len(p.parts)):
        if p.is_dir():
            if not any(p.iterdir()):
                p.rmdir()
        elif p.relative_to(out).as_posix() not in kept:
            p.unlink()
    if not any(folder.iterdir()):
        folder.rmdir()


def _few(names: list[str], shown: int = 4) -> str:
    return ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")
