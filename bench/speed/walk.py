"""How far one follows `config_path` from `runner.run` through the code before the first phase
runs: the stops (files entered, returns included) and how often `runner.py` is entered.

    python -m bench.speed.walk [CONFIG]          # default configs/sample.yaml
    python -m bench.speed.walk --list            # every stop, in order
    python -m bench.speed.walk --with-storage    # and the run's storage, into the readers

It runs `gristmill.pipeline.run.runner.run(CONFIG)` with the output sent to a temporary folder,
under `sys.setprofile`, and stops the run when an executor's `run_phase` is first called (the
phases start; nothing after that is counted). The rule:

- a frame is followed when it is `runner.run`, or when its caller is followed and one of its
  arguments (`self` and `*args` included) is "of the run": the config path itself, or an
  instance of a class defined in one of the modules that hold the config, the plan and the
  run's state, which holds the plan (`RUN_MODULES` below:
  `gristmill.pipeline.run.{config,plan,observe}`), or a list, tuple or dict holding one;
  `--with-output` follows the output object too (`gristmill.pipeline.output.run_output`, which
  holds the output's folder, key and hash, not the plan); `--with-storage` follows the run's
  storage too: the plan's storage object (`STORAGE` below) and the `storage_options` dict it
  holds (by identity: what older readers were handed), wherever they are passed: the source
  listing, the split planner, the readers, formats/fs.py;
- only gristmill's own functions count (a library's frames are passed through: a gristmill
  function called back from inside pydantic or datatrove is followed if its caller chain, by
  gristmill frames, is);
- a stop is each change of file between consecutive events (call or return) of followed
  frames; `runner.py` entered counts the stops whose file is runner.py;
- depth-limited: a followed call at most `DEPTH` followed calls below `runner.run` (what
  `runner.run` calls, what those call, and what those call); generated code (a dataclass's
  `__init__`) is passed through.

So a property of the plan read in another file is a stop there and one back, which is what a
reader following the code pays too.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import tempfile
from pathlib import Path

import yaml

RUN_MODULES = (  # the config, the plan, and the run's state, which holds the plan
    "gristmill.pipeline.run.config",
    "gristmill.pipeline.run.plan",
    "gristmill.pipeline.run.observe",
)
OUTPUT_MODULES = ("gristmill.pipeline.output.run_output",)  # `--with-output`
STORAGE = ("Storage", "RunStorage")  # `--with-storage`: the run's storage object's classes
DEPTH = 3  # calls below runner.run that a reader follows: runner.run's callees, theirs, theirs


class Reached(BaseException):
    """Raised into the run when its first phase starts: the walk is over."""


def of_run(
    value, path: str, modules: tuple[str, ...], depth: int = 0, held: set[int] | None = None
) -> bool:
    if held is not None and id(value) in held:  # the run's storage, or its options
        return True
    if isinstance(value, str | Path) and str(value) == path:
        return True
    if isinstance(value, list | tuple) and depth == 0:
        return any(of_run(v, path, modules, 1, held) for v in value[:8])
    if isinstance(value, dict) and depth == 0:
        return any(of_run(v, path, modules, 1, held) for v in list(value.values())[:8])
    return type(value).__module__ in modules


def walk(
    config: str, depth: int = DEPTH, modules: tuple[str, ...] = RUN_MODULES, storage=False
) -> list[str]:
    """The files of the stops, in order (see the module doc)."""
    from gristmill.pipeline.run import runner

    held: set[int] | None = set() if storage else None
    stops: list[str] = []
    followed: dict[int, int] = {}  # id(gristmill frame) -> its depth below runner.run, -1: not

    def note(frame) -> None:
        name = frame.f_code.co_filename
        if not stops or stops[-1] != name:
            stops.append(name)

    def nearest(frame):
        """The closest gristmill frame above `frame` (libraries passed through)."""
        frame = frame.f_back
        while frame is not None and id(frame) not in followed:
            frame = frame.f_back
        return frame

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code is runner.run.__code__:
                followed[id(frame)] = 0
                note(frame)
                return
            if not frame.f_globals.get("__name__", "").startswith("gristmill."):
                return
            if code.co_name == "run_phase":
                raise Reached
            parent = nearest(frame)
            up = followed[id(parent)] if parent is not None else -1
            generated = code.co_filename.startswith("<")  # a dataclass's __init__: passed through
            if up < 0 or generated:
                followed[id(frame)] = up if generated else -1
                return
            args = [frame.f_locals.get(n) for n in code.co_varnames[: code.co_argcount]]
            if code.co_flags & inspect.CO_VARARGS:  # `*args` too: `wrapper(check, plan, ...)`
                args += frame.f_locals.get(
                    code.co_varnames[code.co_argcount + code.co_kwonlyargcount], ()
                )
            if held is not None:  # the run's storage, from where it is first handed on
                held.update(
                    id(v) for a in args if type(a).__name__ in STORAGE for v in (a, a.options)
                )
            if up < depth and any(of_run(a, config, modules, held=held) for a in args):
                followed[id(frame)] = up + 1
                note(frame)
            else:
                followed[id(frame)] = -1
        elif event == "return" and id(frame) in followed:
            mine = followed.pop(id(frame))
            if mine > 0 and not frame.f_code.co_filename.startswith("<"):
                caller = nearest(frame)
                while caller is not None and followed.get(id(caller), -1) < 0:
                    caller = nearest(caller)
                if caller is not None:
                    note(caller)

    sys.setprofile(profile)
    try:
        runner.run(config, echo=lambda line: None)
    except Reached:
        pass
    finally:
        sys.setprofile(None)
    return stops


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config", nargs="?", default="configs/sample.yaml")
    ap.add_argument("--list", action="store_true", help="print every stop")
    ap.add_argument("--depth", type=int, default=DEPTH, help=f"default {DEPTH}")
    ap.add_argument(
        "--with-output", action="store_true", help="follow the output object's methods too"
    )
    ap.add_argument("--with-storage", action="store_true", help="follow the run's storage too")
    args = ap.parse_args()
    src = Path(args.config).resolve()
    data = yaml.safe_load(src.read_text())
    with tempfile.TemporaryDirectory(prefix="gristmill-walk-") as tmp:
        data["output"] = str(Path(tmp) / "out")
        for s in data["sources"]:  # the copy lives elsewhere: absolute source paths
            s["paths"] = [str((src.parent / p).resolve()) for p in s.get("paths", [])]
        cfg = Path(tmp) / src.name
        cfg.write_text(yaml.safe_dump(data, sort_keys=False))
        modules = RUN_MODULES + (OUTPUT_MODULES if args.with_output else ())
        stops = walk(str(cfg), args.depth, modules, args.with_storage)
    root = str(Path.cwd())
    names = [s.split("/pipeline/", 1)[-1] if "/pipeline/" in s else s for s in stops]
    if args.list:
        for n in names:
            print(n)
    entered = sum(1 for n in names if n.endswith("run/runner.py"))
    files = len(set(names))
    rule = f"depth {args.depth}{', output followed' if args.with_output else ''}"
    rule += ", storage followed" if args.with_storage else ""
    fs = sum(1 for n in names if n.endswith("stages/formats/fs.py"))
    print(
        f"{len(stops)} stops in {files} files; runner.py entered {entered} times, "
        f"formats/fs.py {fs} ({rule})"
    )
    print(f"in {root}")


if __name__ == "__main__":
    main()
