"""Phone recall and precision of the `pii` stage on the generated international phone set
(`bench.data.phone_sets`), per part, by how the number is written and by whether a phone word is
in the sentence.

A find counts when it overlaps a labelled phone (the rule of `bench.evals.pii_eval`); any other
find is a false one (finds of other types included: a phone taken for a card is an error too).
Figures are reported on the reporting part, `held_out_6`; the rules may be tuned on the others,
which have been looked at. `--show` lists misses and false finds (of the part asked for; never
use it on the reporting part while tuning). `all` scores every part in turn.

    .venv/bin/python -m bench.evals.pii_phones [--part tune|held_out|...|held_out_6|all] [--show]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict

from bench.data.phone_sets import PARTS, REPORTING, load
from bench.evals.pii_eval import _context, stage_redactor


def score(items, find) -> tuple[dict, list[str], float]:
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # gold, found, finds, right
    errors = []
    t0 = time.process_time()
    preds_all = [find(text) for text, _, _ in items]
    seconds = time.process_time() - t0
    for (text, gold, info), preds in zip(items, preds_all, strict=True):
        with_cc = info["form"].startswith(("intl", "e164"))
        cc = "-" if info["form"] == "not_phone" else "yes" if with_cc else "no"
        keys = (
            "all",
            f"form {info['form']}",
            f"phone word: {'yes' if info['word'] else 'no'}",
            f"country code: {cc}",
            f"country code or word: {'yes' if cc == 'yes' or info['word'] else 'no'}",
            f"cc {cc}, word {'yes' if info['word'] else 'no'}",
        )
        for s, e, _ in gold:
            hit = any(pt == "phone" and ps < e and s < pe for ps, pe, pt in preds)
            for k in keys:
                rows[k][0] += 1
                rows[k][1] += hit
            if not hit:
                errors.append(f"MISS  {info['region']} {info['form']:<18} {_context(text, s, e)}")
        for ps, pe, pt in preds:
            right = pt == "phone" and any(ps < e and s < pe for s, e, _ in gold)
            for k in keys:
                rows[k][2] += 1
                rows[k][3] += right
            if not right:
                errors.append(f"FALSE {info['region']} {pt:<18} {_context(text, ps, pe)}")
    return rows, errors, seconds


def report(part: str, rows: dict, seconds: float, n: int) -> list[str]:
    lines = [
        f"{part}: {n} sentences ({seconds * 1e3:.0f} ms CPU)",
        f"  {'':<26} {'phones':>6} {'found':>6} {'recall':>7} {'finds':>6} {'right':>6} "
        f"{'precision':>9}",
    ]
    for k in sorted(rows, key=lambda k: (k != "all", k)):
        g, f, p, r = rows[k]
        rec = f"{f / g:.3f}" if g else "-"
        prec = f"{r / p:.3f}" if p else "-"
        lines.append(f"  {k:<26} {g:>6} {f:>6} {rec:>7} {p:>6} {r:>6} {prec:>9}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=(*PARTS, "all"), default=REPORTING)
    ap.add_argument("--show", action="store_true", help="print every miss and false find")
    args = ap.parse_args(argv)
    find = stage_redactor()
    for part in PARTS if args.part == "all" else (args.part,):
        items = load(part)
        rows, errors, seconds = score(items, find)
        print("\n".join(report(part, rows, seconds, len(items))))
        if args.show:
            print("\n".join(errors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
