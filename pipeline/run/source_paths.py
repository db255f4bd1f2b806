"""Every source's files, listed once (`list_sources`): a source's `paths` -> its input files,
an earlier run's documents (pipeline/run/run_sources.py), and the rule that a run never reads a
run's output.

Each entry of `paths` is a file, a folder (read file by file, recursively) or a glob pattern
(`**` for any depth), relative to the config file. A folder's (or a pattern's, or a URL
prefix's) files are input by their suffix, compared in any case (`input_kind`); the others are
passed over and counted by suffix, for the run to say so (a file a pattern or a path names
itself must be of an input type). Two guards keep outputs out of the
inputs:

- the config's own output folder may not overlap a source: inside a source folder, equal to a
  source path, containing one, or reachable by a source's pattern, all with symlinks resolved.
  This is refused when the config loads, before any work, in one line naming both;
- a folder holding a run's output (a gristmill `manifest.json`, `_work/` or the run lock) found
  while walking a folder or matching a pattern is passed over, with everything under it. A source
  that names such a folder or file itself (no wildcard) reads it: that is on purpose.
"""

from __future__ import annotations

import glob
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gristmill.pipeline.output.layout import LOCK, WORK
from gristmill.pipeline.output.manifest import MANIFEST
from gristmill.pipeline.run.config import RunConfig
from gristmill.pipeline.run.run_sources import RunSource, check_output, resolve_run
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fs import PLAIN, Storage, is_url, local_path
from gristmill.stages.read.sources import SUPPORTED_SUFFIXES, input_kind

WILDCARDS = re.compile(r"[*?\[]")
# what a run's output folder holds, for asking whether a pattern reaches into one
LAYOUT_SAMPLES = (
    MANIFEST,
    "report.html",
    "tokens/s/00000.docs.parquet",
    "tokens/s/00000.bin",
    "documents/s/00000.parquet",
    "rejected/input/00000.jsonl.zst",
    "rejected/s/00000.summary.json",
    "mixes/m/00000.docs.parquet",
    f"{WORK}/k/p/x.json",
)


class SourceError(GristmillError):
    pass


@dataclass(frozen=True)
class Sources:
    """Every source's files, found once."""

    files: list[list[tuple[str, str]]]  # per source: (display path, path)
    runs: dict[int, RunSource]  # earlier runs read as sources, by source index
    names: list[tuple[str, str]]  # (name, origin) of every source of the documents, in rank order
    passed_over: list[str]  # run output folders a source's folder or pattern reached
    other_files: Counter  # source folders' files not of an input type, by suffix


def list_sources(
    run: RunConfig, root: Path, output: Path | str, storage: Storage
) -> tuple[Sources | None, list[str]]:
    """The files of every source of `run` (paths relative to `root`, the config's folder), or
    None and every source's problems, a line each; `output` (the folder or URL the run writes)
    may overlap none of them."""
    other = Counter()
    listed, passed, path_lines = path_files(root, output, run.sources, storage, other)
    if listed is None:  # a source reaches the output: nothing more is listed
        return None, path_lines
    lines: list[str] = []  # every source's problems, said together
    runs = {}
    for i, s in enumerate(run.sources):
        if s.run is None:
            continue
        try:
            runs[i] = resolve_run(root, i, s.run, s.sources, storage)
        except GristmillError as e:
            lines += str(e).splitlines()
    for i, r in runs.items():
        try:
            check_output(i, r, output)
        except GristmillError as e:
            lines += str(e).splitlines()
    if lines or path_lines:
        return None, lines + path_lines
    names = [
        pair
        for i, s in enumerate(run.sources)
        for pair in (runs[i].sources if i in runs else [(s.name, s.origin)])
    ]
    files = [
        [(d, p) for d, p, _ in runs[i].files] if i in runs else listed[i]
        for i in range(len(run.sources))
    ]
    return Sources(files, runs, names, passed, other), []


def path_files(
    root: Path, output: Path | str, sources, storage: Storage = PLAIN, other: Counter | None = None
) -> tuple[list[list[tuple[str, str]]] | None, list[str], list[str]]:
    """The files of every source that reads `paths` (`expand`; `[]` for a source read from an
    earlier run), no two shown alike (`distinct`), the run output folders passed over, and
    every source's problems, a line each. An `output` (the folder or URL the run writes) that
    a source reaches stops the listing, which would list it: None, and that one problem."""
    try:
        check_overlap(root, output, [s for s in sources if s.run is None])
    except GristmillError as e:
        return None, [], str(e).splitlines()
    found, skipped, lines = [], set(), []
    for i, s in enumerate(sources):
        files = []
        if s.run is None:
            try:
                files, passed = expand(root, i, s.paths, storage, other)
                skipped.update(passed)
            except GristmillError as e:
                lines += str(e).splitlines()
        found.append(files)
    return distinct(found), sorted(skipped), lines


def expand(
    root: Path,
    i: int,
    paths: list[str],
    storage: Storage = PLAIN,
    other: Counter | None = None,
) -> tuple[list[tuple[str, str]], list[str]]:
    """(display path, absolute path) of every file of source `i`, sorted, each path checked;
    and the run output folders passed over (display paths). A URL's display path is itself.
    `other` counts, by suffix, the files of a folder (pattern, prefix) that are not input."""
    files: list[tuple[str, str]] = []
    skipped: list[str] = []
    other = Counter() if other is None else other
    for j, pattern in enumerate(paths):
        where = f"sources[{i}].paths[{j}]"
        if is_url(pattern):
            found = _url_files(where, pattern, storage, skipped, other)
            files += [(u, u) for u in found]
            continue
        pattern = local_path(pattern)
        named = not WILDCARDS.search(pattern)  # a path given as it is: read, whatever it holds
        anchor = os.path.dirname(os.path.abspath(_base(root, pattern)))  # displays start below
        matched = sorted(glob.glob(str(root / pattern), recursive=True))
        if not matched and named:  # a file or folder named as it is, not a pattern
            rel = (
                "" if Path(pattern).is_absolute() else f" (relative to the config's folder {root})"
            )
            raise SourceError(f"{where}: no such file or folder: {pattern!r}{rel}")
        if not matched:
            raise SourceError(f"{where}: no file matches {pattern!r}")
        for m in matched:
            if not named and (layout := _layout_above(Path(m), _base(root, pattern))):
                skipped.append(os.path.relpath(layout, root))
                continue
            for f in _files(Path(m), named, skipped, root):
                if input_kind(f) is None:
                    if Path(m).is_dir():
                        other[suffix_of(f)] += 1  # not input: counted, and the run says so
                        continue
                    allowed = ", ".join(SUPPORTED_SUFFIXES)
                    raise SourceError(f"{where}: unsupported file type {f!r}; supported: {allowed}")
                files.append((os.path.relpath(f, anchor), os.path.abspath(f)))
    if not files:
        raise SourceError(f"sources[{i}].paths: no input file of a supported type")
    return files, sorted(set(skipped))


def distinct(found: list[list[tuple[str, str]]]) -> list[list[tuple[str, str]]]:
    """Every source's (display path, path) pairs, two files never shown alike: where two
    display paths are one, each takes more of its folders, from the end, until they differ."""
    depth = {p: len(Path(d).parts) for files in found for d, p in files if not is_url(p)}

    def shown(p: str) -> str:
        return "/".join(Path(p).parts[-depth[p] :])

    while True:
        seen: dict[str, set[str]] = {}
        for p in depth:
            seen.setdefault(shown(p), set()).add(p)
        alike = [p for paths in seen.values() if len(paths) > 1 for p in paths]
        if not alike:
            break
        for p in alike:
            depth[p] += 1
    return [[(shown(p) if p in depth else d, p) for d, p in files] for files in found]


def suffix_of(name: str) -> str:
    """`.csv`, `.csv.gz` (a compression's suffix with the one before it), or `(none)`."""
    parts = [p.lower() for p in Path(name).suffixes]
    if len(parts) > 1 and parts[-1] in (".gz", ".zst", ".bz2", ".xz", ".lz4"):
        return "".join(parts[-2:])
    return parts[-1] if parts else "(none)"


def describe_other(other: Counter) -> str | None:
    """The run's one line about source files passed over, or None when there were none."""
    if not other:
        return None
    n = sum(other.values())
    kinds = ", ".join(f"{c} {sfx}" for sfx, c in sorted(other.items(), key=lambda x: (-x[1], x[0])))
    return (
        f"sources: passed over {n} file{'s' * (n != 1)} not of an input type ({kinds}); input "
        "types: .jsonl .ndjson .json .parquet .txt .warc .wet, plain or .gz/.zst, any case"
    )


def _url_files(
    where: str, pattern: str, storage: Storage, skipped: list[str], other: Counter
) -> list[str]:
    """The supported objects a URL names (an object, a prefix, a glob); like a local folder's,
    objects under a run's output prefix (`manifest.json` or `_work/` in it) are passed over."""
    try:
        found = storage.list(pattern)
    except OSError as e:
        raise SourceError(f"{where}: {pattern}: {type(e).__name__}: {e}") from None
    if not found:
        raise SourceError(f"{where}: no object matches {pattern!r}")
    base = pattern if not WILDCARDS.search(pattern) else _base_url(pattern)
    outputs = {u.rsplit("/", 1)[0] for u in found if u.endswith(f"/{MANIFEST}") or f"/{WORK}/" in u}
    outputs = {o.split(f"/{WORK}/")[0] for o in outputs if o.rstrip("/") != base.rstrip("/")}
    skipped += sorted(outputs)
    keep = [u for u in found if not any(u.startswith(o + "/") for o in outputs)]
    named = not WILDCARDS.search(pattern) and keep == [pattern]
    bad = [u for u in keep if input_kind(u) is None]
    if named and bad:
        allowed = ", ".join(SUPPORTED_SUFFIXES)
        raise SourceError(f"{where}: unsupported file type {pattern!r}; supported: {allowed}")
    other.update(suffix_of(u.rsplit("/", 1)[-1]) for u in bad)
    return [u for u in keep if input_kind(u) is not None]


def _base_url(pattern: str) -> str:
    return WILDCARDS.split(pattern, maxsplit=1)[0].rsplit("/", 1)[0]


def _files(m: Path, named: bool, skipped: list[str], root: Path) -> list[str]:
    """A matched path's files: itself, or a folder's files below it (a folder named like a
    data file, `x.jsonl/`, is passed on as one: the reader rejects it with its reason)."""
    if not m.is_dir() or input_kind(str(m)) is not None:
        return [str(m)]
    out = []
    for folder, dirs, names in os.walk(m):
        here = Path(folder)
        if (not named or here != m) and is_run_output(here):
            skipped.append(os.path.relpath(here, root))
            dirs[:] = []
            continue
        dirs.sort()
        out += [str(here / n) for n in names if (here / n).is_file()]
    return sorted(out)


def is_run_output(folder: Path) -> bool:
    """A folder a gristmill run writes: its `_work/`, its lock, or its manifest."""
    if folder.name == WORK or (folder / WORK).is_dir() or (folder / LOCK).exists():
        return True
    try:
        with open(folder / MANIFEST, "rb") as fh:
            return b'"gristmill_version"' in fh.read(256)
    except OSError:
        return False


def _layout_above(path: Path, base: Path) -> Path | None:
    """The run output folder that holds `path`, below the pattern's fixed part, if any."""
    for folder in [path, *path.parents]:
        if folder == base or base not in folder.parents:
            return None
        if is_run_output(folder):
            return folder
    return None


def _base(root: Path, pattern: str) -> Path:
    """The part of a pattern before its first wildcard: a folder every match lies in."""
    fixed = []
    for part in Path(pattern).parts:
        if WILDCARDS.search(part):
            break
        fixed.append(part)
    return root.joinpath(*fixed)


def check_overlap(root: Path, output: Path | str, sources) -> None:
    """Refuse an output folder that a source reads, or that holds a source (symlinks resolved;
    an output URL against the sources' URLs, by prefix)."""
    url = output if is_url(output) else None
    out = None if url else Path(os.path.realpath(output))
    for i, src in enumerate(sources):
        for j, pattern in enumerate(src.paths):
            if url or is_url(pattern):
                how = _url_overlap(pattern, url) if url and is_url(pattern) else None
            else:
                how = _overlap(root, local_path(pattern), out)
            if how:
                raise SourceError(
                    f"output {output} {how} sources[{i}].paths[{j}] ({pattern}): a run would "
                    "read its own output; put the output folder outside every source"
                )


def _url_overlap(pattern: str, out: str) -> str | None:
    out = out.rstrip("/")
    base = (_base_url(pattern) if WILDCARDS.search(pattern) else pattern).rstrip("/")
    if base == out:
        return "is"
    if base.startswith(out + "/"):
        return "holds"
    if out.startswith(base + "/"):
        return "is inside" if not WILDCARDS.search(pattern) else "is reached by"
    return None


def _overlap(root: Path, pattern: str, out: Path) -> str | None:
    if not WILDCARDS.search(pattern):
        path = Path(os.path.realpath(root / pattern))
        if path == out:
            return "is"
        if path in out.parents:
            return "is inside"
        if out in path.parents:
            return "holds"
        return None
    base = Path(os.path.realpath(_base(root, pattern)))
    if base == out or out in base.parents:
        return "holds"
    tail = os.path.relpath(root / pattern, _base(root, pattern))
    rx = _glob_regex(str(base / tail))
    candidates = [out, *out.parents, *(out / s for s in LAYOUT_SAMPLES)]
    if any(rx.fullmatch(str(c)) for c in candidates if base in c.parents):
        return "is reached by"
    return None


def _glob_regex(pattern: str) -> re.Pattern:
    """glob's pattern (recursive: `**` is any number of folders) as a regular expression."""
    out = []
    parts = pattern.split("/")
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        rx, n = "", 0
        while n < len(part):
            c = part[n]
            if c == "*":
                rx += "[^/]*"
            elif c == "?":
                rx += "[^/]"
            elif c == "[" and (close := part.find("]", n + 2)) != -1:
                body = part[n + 1 : close]
                rx += "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
                n = close
            else:
                rx += re.escape(c)
            n += 1
        out.append(rx + ("" if last else "/"))
    return re.compile("".join(out))
