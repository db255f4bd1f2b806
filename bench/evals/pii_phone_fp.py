"""False phone finds on real text: the `pii` stage's phone finds in the development corpus (real
documentation pages in many languages, where phone numbers are rare and version numbers, dates,
sizes, addresses, hashes and tables are everywhere), written out so that two versions of the
rules can be compared find by find.

`--out FILE` writes one line per phone find (document id, start, end, the value and its
context); `--compare BEFORE AFTER` prints the finds of AFTER that BEFORE does not have (and the
count of those gone), to be read and classified by hand: a new find there is a false find unless
it is someone's phone number. Run the two versions from two checkouts (a git worktree of the
old commit with its own environment) on the same `-n` and `--every`. `--data` may also name
another file of records with a `text` field (`manpages_paragraphs.jsonl.gz`) or a tab-separated
file of `label<TAB>text` lines (`SMSSpamCollection`).

    .venv/bin/python -m bench.evals.pii_phone_fp -n 3000 --every 6 --out after.tsv
    .venv/bin/python -m bench.evals.pii_phone_fp --compare before.tsv after.tsv
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.data.corpus import corpus_path
from gristmill.stages.formats.docio import read_records


def sample(path: Path, n: int, every: int) -> list[tuple[str, str]]:
    """(id, text) of every `every`-th record with text, up to `n` (the corpus is ordered by
    source: a stride reaches all of them)."""
    out = []
    records = read_records(path) if ".json" in path.name else _tsv(path)
    for i, rec in enumerate(records):
        text = rec.get("text")
        if i % every or not isinstance(text, str) or not text.strip():
            continue
        out.append((str(rec.get("id", i)), text))
        if len(out) >= n:
            break
    return out


def _tsv(path: Path):
    """Records of a `label<TAB>text` file (the SMS spam collection): its text."""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            yield {"text": line.rstrip("\n").partition("\t")[2]}


def context(text: str, s: int, e: int, width: int = 40) -> str:
    left = text[max(0, s - width) : s]
    right = text[e : e + width]
    return repr(f"{left}[{text[s:e]}]{right}")[1:-1]


def finds(docs: list[tuple[str, str]]) -> tuple[list[str], float]:
    from gristmill.stages.pii.stage import Detector, PiiParams

    detector = Detector(PiiParams(types=["phone"]))
    lines = []
    t0 = time.process_time()
    for doc_id, text in docs:
        for s, e, t in detector.find(text):
            if t == "phone":
                lines.append(f"{doc_id}\t{s}\t{e}\t{context(text, s, e)}")
    return lines, time.process_time() - t0


def compare(before: Path, after: Path) -> int:
    def keyed(path: Path) -> dict[tuple[str, str, str], str]:
        rows = [line.split("\t", 3) for line in path.read_text().splitlines() if line]
        return {(d, s, e): c for d, s, e, c in rows}

    old, new = keyed(before), keyed(after)
    added = [k for k in new if k not in old]
    gone = [k for k in old if k not in new]
    print(f"{len(old)} finds before, {len(new)} after: {len(added)} new, {len(gone)} gone")
    for k in added:
        print(f"NEW  {k[0]}  {new[k]}")
    for k in gone:
        print(f"GONE {k[0]}  {old[k]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="data folder (or the corpus file itself)")
    ap.add_argument("-n", type=int, default=3000, help="documents (3000)")
    ap.add_argument("--every", type=int, default=6, help="take every n-th record (6)")
    ap.add_argument("--out", type=Path, help="write the finds here")
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    path = corpus_path(args.data)
    if path is None:
        print("no corpus: ../shared/data/corpus/docs_web.jsonl.zst is absent (or pass --data)")
        return 1
    docs = sample(path, args.n, args.every)
    lines, seconds = finds(docs)
    chars = sum(len(t) for _, t in docs)
    print(f"{len(docs)} documents, {chars / 1e6:.1f} M characters: {len(lines)} phone finds"
          f" ({seconds:.1f} s CPU)")  # fmt: skip
    if args.out:
        args.out.write_text("".join(f"{line}\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
