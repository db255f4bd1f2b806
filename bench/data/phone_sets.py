"""The generated international phone set: its parts frozen as data files
(`bench/data/pii/phone_<part>.jsonl`), and the generator a new part is made with.

Our own generated data, written for this project (nothing copied). Each sentence holds one
number or a hard negative, in a frame of one of 11 to 30 languages, with or without a phone
word. The numbers start from libphonenumber's example numbers of every supported region (mobile,
fixed line, toll-free), with digits redrawn until the library calls them valid for the region
and of the example's type, so the set measures finding and delimiting, not the library's
judgment of validity. Each number is written twice, once with a country code and once without
(a tenth of those in full-width digits, in zh or ja frames), in the library's formats and in
ones it does not produce (`(0)` after the country code, `00` for `+`, dots, dashes, slashes,
no-break spaces, no separators).

Parts: `tune`, `held_out`, `held_out_2` to `held_out_6`, each with its own frames, negatives and
draws (`phone_frames.json`: a part's frames by language, `[with a phone word], [without]`, `{}`
the number; its negatives; its seed). Every part but `held_out_6` has been looked at while the
rules were tuned and is tuning data; `held_out_6` is the reporting part (docs/stages/pii.md,
History). `held_out_3` on were made by `generate` from their inputs here, and `test_phone_sets`
checks that it still makes them; the first three by earlier generators, kept only as their
frozen files. A new part: add its frames, negatives and a new seed to `phone_frames.json`, then
`python -m bench.data.phone_sets --freeze PART`, before the rules it is to score are written.

A line of a part's file: `[text, [[start, end]], region, form, lang, word, kind]` (`[]` and
`"-"`, `"not_phone"` for a negative; `kind` is null in the first two parts).

    .venv/bin/python -m bench.data.phone_sets [--part held_out_6] [--show 20] [--freeze PART]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import phonenumbers as pn

DATA = Path(__file__).resolve().parent / "pii"
PARTS = ("tune", "held_out", "held_out_2", "held_out_3", "held_out_4", "held_out_5", "held_out_6")
REPORTING = "held_out_6"
FIELDS = ("region", "form", "lang", "word", "kind")
Item = tuple[str, list[tuple[int, int, str]], dict]


@cache
def inputs() -> dict:
    """Every part's frames, negatives and (for those `generate` made) seed."""
    return json.loads((DATA / "phone_frames.json").read_text(encoding="utf-8"))


def load(part: str) -> list[Item]:
    """(text, [(start, end, "phone")], info) of every sentence of a frozen part."""
    out = []
    with (DATA / f"phone_{part}.jsonl").open(encoding="utf-8") as f:
        for line in f:
            text, spans, *rest = json.loads(line)
            info = {k: v for k, v in zip(FIELDS, rest, strict=True) if v is not None}
            out.append((text, [(s, e, "phone") for s, e in spans], info))
    return out


def make(part: str) -> list[Item]:
    """A part made afresh by `generate` from its inputs (parts with a seed only)."""
    spec = inputs()[part]
    frames = {lang: (word, plain) for lang, (word, plain) in spec["frames"].items()}
    return generate(
        spec["seed"], frames, spec["not_phones"], negatives_in_turn=spec["negatives_in_turn"]
    )


def freeze(part: str, items: list[Item]) -> Path:
    path = DATA / f"phone_{part}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for text, gold, info in items:
            row = [text, [[s, e] for s, e, _ in gold], *(info.get(k) for k in FIELDS)]
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path


T = pn.PhoneNumberType
# the types a redrawn number may have, by the type of the example it starts from
KINDS = {
    T.MOBILE: {T.MOBILE, T.FIXED_LINE_OR_MOBILE},
    T.FIXED_LINE: {T.FIXED_LINE, T.FIXED_LINE_OR_MOBILE},
    T.TOLL_FREE: {T.TOLL_FREE},
}
KIND_NAMES = {T.MOBILE: "mobile", T.FIXED_LINE: "fixed", T.TOLL_FREE: "toll_free"}
CJK = ("ja", "zh")  # where full-width digits are written
FULL_WIDTH = str.maketrans("0123456789+()-", "０１２３４５６７８９＋（）－")


def regions() -> list[str]:
    return sorted(r for r in pn.SUPPORTED_REGIONS if r != "001")


def _redraw(
    rng: random.Random, num: pn.PhoneNumber, kind: int, region: str
) -> pn.PhoneNumber | None:
    """A new number of the example's type, valid for its region: up to its last 6 digits
    redrawn."""
    national = str(num.national_number)
    keep = max(2, len(national) - 6)
    for _ in range(100):
        digits = national[:keep] + "".join(str(rng.randint(0, 9)) for _ in national[keep:])
        cand = pn.PhoneNumber(country_code=num.country_code, national_number=int(digits))
        cand.italian_leading_zero = num.italian_leading_zero
        cand.number_of_leading_zeros = num.number_of_leading_zeros
        if (
            digits != national
            and len(set(digits)) > 3
            and pn.is_valid_number_for_region(cand, region)
            and pn.number_type(cand) in KINDS[kind]
        ):
            return cand
    return None


def _forms(rng: random.Random, num: pn.PhoneNumber, region: str) -> list[tuple[str, str]]:
    """(form name, written number): one with the country code, one without."""
    intl = pn.format_number(num, pn.PhoneNumberFormat.INTERNATIONAL)
    national = pn.format_number(num, pn.PhoneNumberFormat.NATIONAL)
    cc = f"+{num.country_code}"
    rest = re.findall(r"\d+", intl[len(cc) :])
    with_cc = [
        ("intl", intl),
        ("e164", pn.format_number(num, pn.PhoneNumberFormat.E164)),
        ("intl_00", "00" + intl[1:]),
        ("intl_dash", "-".join([cc, *rest])),
        ("intl_dots", ".".join([cc, *rest])),
    ]
    if len(rest) > 1:
        with_cc.append(("intl_paren_area", f"{cc} ({rest[0]}) {' '.join(rest[1:])}"))
    prefix = pn.PhoneMetadata.metadata_for_region(region).national_prefix
    if prefix == "0" and national.startswith("0") and national[1:2].isdigit():
        with_cc.append(("intl_trunk", f"{cc} (0){national[1:]}"))
    groups = re.findall(r"\d+", national)
    without = [("national", national), ("national_solid", "".join(groups))]
    if len(groups) > 1:
        without += [("national_dots", ".".join(groups)), ("national_dash", "-".join(groups))]
        without.append(("national_spaces", " ".join(groups)))
        if groups[0].startswith("0") and len(groups[0]) > 1 and national[0] == "0":
            without.append(("national_slash", f"{groups[0]}/{''.join(groups[1:])}"))
    without = [(f, w) for f, w in without if f == "national" or w != national]
    if rng.random() < 0.1:
        without = [("national_fullwidth", national.translate(FULL_WIDTH))]
    return [rng.choice(with_cc), rng.choice(without)]


def generate(
    seed: str, frames: dict, not_phones: list[str], *, negatives_in_turn: bool = False
) -> list[tuple[str, list[tuple[int, int, str]], dict]]:
    """(text, [(start, end, "phone")], info) of every sentence of a part: a mobile and a
    fixed-line number of every region in two forms (with and without country code), and its
    toll-free number, where it has one, in one of them; then every hard negative in a frame
    with a phone word and in one without. `frames` is lang: (frames with a phone word, frames
    without), `{}` the number. The negatives' languages and frames are drawn, or, with
    `negatives_in_turn` (held_out_3), taken in turn."""
    rng = random.Random(seed)
    langs = sorted(frames)
    out = []
    for region in regions():
        for kind, name in KIND_NAMES.items():
            ex = pn.example_number_for_type(region, kind)
            num = _redraw(rng, ex, kind, region) if ex is not None else None
            if num is None:
                continue
            forms = _forms(rng, num, region)
            for form, written in [rng.choice(forms)] if kind == T.TOLL_FREE else forms:
                lang = rng.choice(CJK if form == "national_fullwidth" else langs)
                word = rng.random() < 0.5
                text = rng.choice(frames[lang][1 - word])
                start = text.index("{}")
                info = {"region": region, "form": form, "lang": lang, "word": word, "kind": name}
                out.append((text.format(written), [(start, start + len(written), "phone")], info))
    for i, value in enumerate(not_phones):
        for word in (True, False):
            if negatives_in_turn:
                lang = langs[(5 * i + 2 * word) % len(langs)]
                text = frames[lang][1 - word][i % len(frames[lang][1 - word])]
            else:
                lang = rng.choice(langs)
                text = rng.choice(frames[lang][1 - word])
            info = {"region": "-", "form": "not_phone", "lang": lang, "word": word}
            out.append((text.format(value), [], info))
    return out


def main(argv: list[str] | None = None) -> int:
    """Counts of a part by form, kind, phone word and language; `--show N` prints its first N
    sentences (not while tuning)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=PARTS, default=REPORTING)
    ap.add_argument("--show", type=int, default=0, help="sentences to print (0; not while tuning)")
    ap.add_argument("--freeze", metavar="PART", help="make PART from its inputs and write it")
    args = ap.parse_args(argv)
    if args.freeze:
        print(f"wrote {freeze(args.freeze, make(args.freeze))}")
        return 0
    items = load(args.part)
    n_phones = sum(len(s) for _, s, _ in items)
    print(f"{args.part}: {len(items)} sentences, {n_phones} phones")
    for key in ("form", "kind", "word", "lang"):
        counts = Counter(str(info.get(key, "-")) for _, _, info in items)
        print(f"  by {key}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    for text, _, info in items[: args.show]:
        print(f"  {info['form']:<20} {text!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
