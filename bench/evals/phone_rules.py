"""The `pii` stage's phone rules one by one: each switched off in turn, scored on every part of
the generated phone set and on the synth set, beside the whole rule set and libphonenumber's own
finder (`PhoneNumberMatcher`, leniency VALID, over the default regions: `phone_matcher`).

A rule is switched off by replacing one of our own functions or patterns (in
`gristmill.stages.pii.phones.*` and `gristmill.stages.pii.numbers`) inside this bench process,
then restoring it: it is our code, not a dependency's, and nothing outside this script sees it.
A guard switched off never refuses; a rule that lets a number through switched off never does.
A rule "does not earn its keep" when, switched off, recall moves by less than 1 point on every
part and precision drops on none: libphonenumber's way (the plans alone) does as well there.

    .venv/bin/python -m bench.evals.phone_rules [--parts all] [--rules all] [--no-matcher]
"""

from __future__ import annotations

import argparse
import re
import sys
from contextlib import contextmanager

from bench.data.corpus import corpus_path, load_docs
from bench.data.phone_sets import PARTS, load
from bench.evals.phone_matcher import _phones_only, matcher, stage_phones, synth_items
from gristmill.stages.pii import numbers
from gristmill.stages.pii.phones import candidates, plans

NEVER = re.compile(r"(?!)")
C = candidates.Phones


def _no_veto(text, s, kinds):
    got = _last_context(text, s, kinds)
    return None if got == "veto" else got


_last_context = candidates.last_context


class _Everything:
    """A set that holds every character (`SET_OFF` switched off)."""

    def __contains__(self, x) -> bool:
        return True


_EVERYTHING = _Everything()

# name -> (what it does, [(module or class, attribute, replacement)])
RULES = {
    "governs": ("a phone word counts only where it names the number", [
        (candidates, "governs", lambda text, s: True)]),
    "veto": ("a veto word nearer than a phone word (`order no.`)", [
        (candidates, "last_context", _no_veto)]),
    "quantity": ("no phone word for a quantity, dimension, version", [
        (candidates, "quantity", lambda text, s, e: False)]),
    "code_before": ("a code right before the number (`LX 903 481 226`)", [
        (candidates, "code_before", lambda text, s: False)]),
    "crowded": ("a grouped number with no word must stand apart", [
        (candidates, "crowded", lambda text, s, e: False)]),
    "suspicious": ("years, ranges, fractions, thousands... never grouped", [
        (plans, "suspicious", lambda groups, seps: False)]),
    "set_off/field": ("grouped_phone's punctuation and field checks", [
        (candidates, "FIELD_START", re.compile("")), (candidates, "FIELD_END", re.compile("")),
        (candidates, "SET_OFF", _EVERYTHING)]),
    "grouped_phone": ("no word: grouped exactly as a plan's national format", [
        (candidates, "grouped_phone", lambda text, s, e: False)]),
    "exact_grouping": ("exact national grouping (grouped and dotted)", [
        (candidates, "exact_grouping", lambda chunk: False)]),
    "national_shape": ("no word: written as a national number and valid", [
        (candidates, "national_shape", lambda chunk: False)]),
    "valid_elsewhere": ("a strong shape valid in a region outside the list", [
        (plans.PhoneCheck, "_valid_elsewhere", lambda self, chunk: False)]),
    "short": ("4-6 digits right after a phone word", [
        (C, "short", lambda self, text, s, e: False)]),
    "short_after": ("short: not before a town or in a list", [
        (candidates, "_SHORT_AFTER", NEVER)]),
    "label_after": ("a label after the number (`555 0134 office`)", [
        (candidates, "AFTER_PHONE", NEVER)]),
    "word_before": ("a dot after a phone word does not refuse (`โทร.0594`)", [
        (C, "word_before", staticmethod(lambda text, s: False))]),
    "dotted": ("four dotted groups read as a phone, not an IPv4", [
        (C, "dotted", lambda self, text, s, lead, e, emit: 0)]),
    "plus_after": ("`+ 06` after the number: a draw, a sum", [
        (numbers, "PLUS_AFTER", NEVER)]),
    "last_group": ("a last group glued to a word is cut off", [
        (numbers, "LAST_GROUP", NEVER)]),
    "wide_gap": ("a run of spaces splits a chunk", [
        (numbers, "WIDE_GAP", NEVER)]),
}  # fmt: skip


@contextmanager
def switched_off(name: str):
    """Rule `name` off inside the block; restored after, with the caches emptied."""
    saved = [(owner, attr, owner.__dict__[attr]) for owner, attr, _ in RULES[name][1]]
    try:
        for owner, attr, new in RULES[name][1]:
            setattr(owner, attr, new)
        plans.exact_grouping.cache_clear()
        yield
    finally:
        for owner, attr, old in saved:
            setattr(owner, attr, old)
        plans.exact_grouping.cache_clear()


def _sets(parts, docs: int) -> list[tuple[str, list]]:
    sets = [(part, load(part)) for part in parts]
    if (synth := synth_items()) is not None:
        sets.append(("synth", synth))
    if docs and (path := corpus_path(None)) is not None:
        sets.append(("real", [(text, None, {}) for _, text in load_docs(path, docs)]))
    return sets


def _finds(sets, find) -> dict[str, list[list]]:
    """Every item's finds (phones only on the synth set and real text: their other types are
    scored by `pii_eval`)."""
    only = _phones_only(find)
    return {p: [(only if p in ("synth", "real") else find)(t) for t, _, _ in items]
            for p, items in sets}  # fmt: skip


def _prf(items, finds) -> tuple[float, float]:
    """(precision, recall) with the overlap rule of `phone_matcher.prf`."""
    gold_n = found = n = right = 0
    for (_, gold, _), preds in zip(items, finds, strict=True):
        gold_n += len(gold)
        found += sum(any(ps < e and s < pe for ps, pe, t in preds if t == "phone")
                     for s, e, _ in gold)  # fmt: skip
        n += len(preds)
        right += sum(t == "phone" and any(ps < e and s < pe for s, e, _ in gold)
                     for ps, pe, t in preds)  # fmt: skip
    return (right / n if n else 0.0), (found / gold_n if gold_n else 0.0)


def _changed(full, off) -> int:
    """Finds that differ (added or gone) between two runs of one set."""
    return sum(len(set(a) ^ set(b)) for a, b in zip(full, off, strict=True))


def verdict(full: dict, off: dict) -> bool:
    """Does not earn its keep: recall within 1 point and precision no lower, on every part."""
    return all(abs(off[p][1] - full[p][1]) < 0.01 and off[p][0] >= full[p][0] - 1e-9 for p in full)


def table(sets, rules, with_matcher: bool) -> list[str]:
    scored = [(p, items) for p, items in sets if p != "real"]
    real = dict(sets).get("real")
    base = _finds(sets, stage_phones())
    full = {p: _prf(items, base[p]) for p, items in scored}
    rows = [("all rules", full, "")]
    if with_matcher:
        got = _finds(scored, matcher("VALID"))
        rows.append(("matcher VALID", {p: _prf(i, got[p]) for p, i in scored}, ""))
    keep = []
    for name in rules:
        with switched_off(name):
            got = _finds(sets, stage_phones())
        off = {p: _prf(items, got[p]) for p, items in scored}
        spans = sum(_changed(base[p], got[p]) for p, _ in scored if p != "synth")
        extra = f"{spans} / {_changed(base['real'], got['real']) if real else '-'}"
        rows.append((f"- {name}", off, extra))
        if verdict(full, off):
            keep.append(name)
    names = [p for p, _ in scored]
    lines = ["| rule off | " + " | ".join(names) + " | spans changed: parts / real |",
             "|" + "---|" * (len(names) + 2)]  # fmt: skip
    for label, sc, extra in rows:
        cells = [f"{sc[p][0]:.3f} / {sc[p][1]:.3f}" for p in names]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {extra} |")
    lines.append("")
    lines.append("cells: precision / recall (overlap rule). Within 1 point of recall, no lower "
                 f"precision on every part: {', '.join(keep) or 'none'}")  # fmt: skip
    if real:
        chars = sum(len(t) for t, _, _ in real)
        lines.append(f"real: {len(real)} documents, {chars / 1e6:.1f} M characters; "
                     f"{sum(map(len, base['real']))} phone finds with every rule")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="all", help="comma-separated parts, or all")
    ap.add_argument("--rules", default="all", help=f"comma-separated, of: {', '.join(RULES)}")
    ap.add_argument("--no-matcher", action="store_true", help="leave out the matcher's row")
    ap.add_argument("--docs", type=int, default=2000, help="documents of real text (0: none)")
    args = ap.parse_args(argv)
    parts = PARTS if args.parts == "all" else tuple(p for p in args.parts.split(",") if p)
    rules = tuple(RULES) if args.rules == "all" else tuple(args.rules.split(","))
    print("\n".join(table(_sets(parts, args.docs), rules, not args.no_matcher)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
