"""The extraction development pages of ../shared/data/extraction, for the extract benchmarks.

`trafilatura_eval_html.tar.zst` holds 1,032 real pages (tests/eval/*.html, tests/cache/*.html)
as their bytes; `evaldata_dev.json` maps the URL of 482 of them to `{file, with, without}`:
snippets of main text that extraction must keep, and of boilerplate it must drop. Only the dev
half is read: the other half (the archive's own tests/evaldata.json) is left for a final test.

Pages are read into memory straight from the archive (nothing is unpacked to disk) and decoded
the way the WARC reader decodes a response with no HTTP charset: `stages.read.charset.decode_html`.
"""

from __future__ import annotations

import json
import tarfile
from dataclasses import dataclass
from pathlib import Path

from bench import DATA_DIR

ARCHIVE = Path("extraction") / "trafilatura_eval_html.tar.zst"
GOLD = Path("extraction") / "evaldata_dev.json"


@dataclass(frozen=True)
class Page:
    file: str  # name inside tests/eval or tests/cache
    url: str | None  # known for the pages with gold snippets
    raw: bytes
    html: str  # decoded as the WARC reader would
    with_: tuple[str, ...] = ()  # gold main-text snippets
    without: tuple[str, ...] = ()  # gold boilerplate snippets


def default_data_dir() -> Path:
    return DATA_DIR


def find_data(data: Path | None) -> Path | None:
    root = data if data is not None else default_data_dir()
    return root if (root / ARCHIVE).is_file() and (root / GOLD).is_file() else None


def load_pages(root: Path, gold_only: bool) -> list[Page]:
    """Pages sorted by file name; with `gold_only`, just the 482 that have gold snippets."""
    import zstandard

    from gristmill.stages.read.charset import decode_html

    gold = {v["file"]: (url, v) for url, v in json.loads((root / GOLD).read_bytes()).items()}
    raw: dict[str, bytes] = {}
    with (root / ARCHIVE).open("rb") as fh:
        stream = zstandard.ZstdDecompressor().stream_reader(fh)
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                name = member.name.rsplit("/", 1)[-1]
                if member.isfile() and name.endswith(".html"):
                    if gold_only and name not in gold:
                        continue
                    raw[name] = tar.extractfile(member).read()
    pages = []
    for name in sorted(raw):
        url, g = gold.get(name, (None, {}))
        pages.append(
            Page(
                name,
                url,
                raw[name],
                decode_html(raw[name]).text,
                tuple(g.get("with", ())),
                tuple(g.get("without", ())),
            )
        )
    return pages
