"""The `pii` stage's phone rules against libphonenumber's own finder (`PhoneNumberMatcher`), at
the leniencies VALID and POSSIBLE, on every part of the generated phone set and on real text.

The matcher is run once per region of the stage's default `phone_regions` (a number written
without a country code is national for that region; `*` has no matcher equivalent, so the
regions are the 42 named ones) and its matches of all regions are merged (overlapping matches
count once). Scored as `bench.evals.pii_phones` scores the stage: a find is right when it
overlaps a labelled phone; every other find is a false one. On real text (the development
corpus, `--docs` documents), where phones are rare, every find is counted per million
characters and a few are printed to be read.

    .venv/bin/python -m bench.evals.phone_matcher [--parts all] [--docs 2000] [--show 5]
"""

from __future__ import annotations

import argparse
import sys

import phonenumbers as pn

from bench.data.corpus import corpus_path, load_docs
from bench.data.phone_sets import PARTS, load
from bench.evals.pii_eval import _context, default_data_dir, load_synth, stage_redactor
from gristmill.stages.pii.phones.plans import DEFAULT_REGIONS

LENIENCY = {"VALID": pn.Leniency.VALID, "POSSIBLE": pn.Leniency.POSSIBLE}


def matcher(leniency: str, regions=DEFAULT_REGIONS):
    """A finder of (start, end, "phone") with the library's matcher over `regions`."""
    level = LENIENCY[leniency]

    def find(text: str) -> list[tuple[int, int, str]]:
        spans: list[tuple[int, int]] = []
        for region in regions:
            for m in pn.PhoneNumberMatcher(text, region, leniency=level):
                if not any(s < m.end and m.start < e for s, e in spans):
                    spans.append((m.start, m.end))
        return [(s, e, "phone") for s, e in sorted(spans)]

    return find


def stage_phones():
    """The stage's finds of every type (a phone taken for a card is an error too)."""
    return stage_redactor()


def _phones_only(find):
    return lambda text: [sp for sp in find(text) if sp[2] == "phone"]


def prf(items, find) -> tuple[float, float, float, int, int]:
    """(precision, recall, F1, finds, labelled) with the overlap rule."""
    gold_n = found = finds = right = 0
    for text, gold, _ in items:
        preds = find(text)
        gold_n += len(gold)
        found += sum(
            any(ps < e and s < pe for ps, pe, t in preds if t == "phone") for s, e, _ in gold
        )
        finds += len(preds)
        right += sum(
            t == "phone" and any(ps < e and s < pe for s, e, _ in gold) for ps, pe, t in preds
        )
    p = right / finds if finds else 0.0
    r = found / gold_n if gold_n else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0), finds, gold_n


def synth_items() -> list | None:
    """The synth set's sentences with their phone labels only (its other types are not
    phones, and a phone find on them counts against precision)."""
    data = load_synth(default_data_dir())
    if data is None:
        return None
    return [(text, [g for g in gold if g[2] == "phone"], {}) for text, gold in data]


def parts_table(parts) -> list[str]:
    finders = {
        "ours": stage_phones(),
        "VALID": matcher("VALID"),
        "POSSIBLE": matcher("POSSIBLE"),
    }
    head = f"{'part':<12}" + "".join(f"{k + ' P/R/F1':>24}" for k in finders)
    lines = [head]
    sets = [(part, load(part)) for part in parts]
    if (synth := synth_items()) is not None:
        sets.append(("synth", synth))
    for part, items in sets:
        cells = []
        for name, find in finders.items():
            if part == "synth" and name == "ours":
                find = _phones_only(find)
            p, r, f1, _, _ = prf(items, find)
            cells.append(f"{p:.3f}/{r:.3f}/{f1:.3f}")
        lines.append(f"{part:<12}" + "".join(f"{c:>24}" for c in cells))
    return lines


def real_text(n: int, show: int) -> list[str]:
    path = corpus_path(None)
    if path is None:
        return ["no development corpus: the real-text rows are skipped"]
    docs = load_docs(path, n)
    chars = sum(len(t) for _, t in docs)
    lines = [f"real text: {len(docs)} documents of {path.name}, {chars / 1e6:.1f} M characters"]
    ours = stage_redactor()
    finders = {
        "ours": _phones_only(ours),
        "VALID": matcher("VALID"),
        "POSSIBLE": matcher("POSSIBLE"),
    }
    for name, find in finders.items():
        found = [(doc_id, text, sp) for doc_id, text in docs for sp in find(text)]
        lines.append(
            f"  {name:<9} {len(found):>6} phone finds, {len(found) / chars * 1e6:.1f} per M chars"
        )
        for doc_id, text, (s, e, _) in found[:show]:
            lines.append(f"    {doc_id}: {_context(text, s, e)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="all", help="comma-separated parts, all, or none ('')")
    ap.add_argument("--docs", type=int, default=2000, help="documents of real text (2000; 0: none)")
    ap.add_argument("--show", type=int, default=5, help="real-text finds to print per finder")
    args = ap.parse_args(argv)
    parts = PARTS if args.parts == "all" else tuple(p for p in args.parts.split(",") if p)
    if parts:
        print("\n".join(parts_table(parts)))
    if args.docs:
        print("\n".join(real_text(args.docs, args.show)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
