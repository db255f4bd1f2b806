"""A stage on some sources, on real text: the development corpus's Python documentation as a
`code` source and its GNOME help pages as `web`, through `line_clean` then `write`, once with
`line_clean: {sources: [web]}` and once on every source. Per source: documents, characters, and a
sha256 over the (id, text) pairs in id order, against the input's: the code source written by
the first run must be its input, character for character.

    GRISTMILL_DATA=../shared/data .venv/bin/python -m bench.evals.some_sources
"""

from __future__ import annotations

import hashlib
import io
import tempfile
from pathlib import Path

import orjson
import yaml
import zstandard

from bench.evals.line_clean_data import DATA
from gristmill.pipeline.run.runner import run
from gristmill.stages.formats.docio import read_records

KINDS = {"python3.11-doc": "code", "gnome-user-docs": "web"}  # package -> source


def write_sources(folder: Path) -> dict[str, list[dict]]:
    """`<source>.jsonl` of each source (id, text, url), and their records."""
    found: dict[str, list[dict]] = {"web": [], "code": []}
    with open(Path(DATA) / "corpus" / "docs_web.jsonl.zst", "rb") as f:
        for line in io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(f), "utf-8"):
            d = orjson.loads(line)
            if (kind := KINDS.get(d["source"])) is not None:
                found[kind].append({"id": d["id"], "text": d["text"], "url": d["url"]})
    for kind, recs in found.items():
        (folder / f"{kind}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    return found


def digest(records) -> tuple[int, int, str]:
    """(documents, characters, sha256 of the (id, text) pairs in id order, 16 hex)."""
    h, n, chars = hashlib.sha256(), 0, 0
    for r in sorted(records, key=lambda r: r["id"]):
        h.update(orjson.dumps([r["id"], r["text"]]))
        n, chars = n + 1, chars + len(r["text"])
    return n, chars, h.hexdigest()[:16]


def one_run(folder: Path, name: str, line_clean) -> dict[str, tuple]:
    config = {
        "output": f"out_{name}",
        "tasks": 2,
        "workers": 1,
        "sources": [{"name": k, "paths": [f"{k}.jsonl"]} for k in ("web", "code")],
        "stages": [line_clean, {"write": {"format": "jsonl"}}],
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    run(str(path), echo=lambda s: None)
    docs = folder / f"out_{name}" / "documents"
    return {
        kind: digest(r for p in sorted((docs / kind).glob("*.jsonl.zst")) for r in read_records(p))
        for kind in ("web", "code")
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs = {kind: digest(recs) for kind, recs in write_sources(folder).items()}
        web_only = one_run(folder, "web_only", {"line_clean": {"sources": ["web"]}})
        every = one_run(folder, "every", "line_clean")
    print(f"{'run':<34}{'source':<8}{'docs':>8}{'chars':>14}  sha256 (id, text)")
    rows = [("input", inputs), ("line_clean: {sources: [web]}", web_only)]
    for label, figures in [*rows, ("line_clean on every source", every)]:
        for kind in ("web", "code"):
            n, chars, sha = figures[kind]
            print(f"{label:<34}{kind:<8}{n:>8,}{chars:>14,}  {sha}")
    print("code untouched with sources: [web]:", web_only["code"] == inputs["code"])


if __name__ == "__main__":
    main()
