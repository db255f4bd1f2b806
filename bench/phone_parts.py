"""How the parts `held_out_3` to `held_out_6` of the generated phone set are made (issue 16).

Each part (bench/phone_set3.py to phone_set6.py) holds only its own data, a seed, sentence
frames and hard negatives, and builds its sentences with `generate` and prints its counts with
`main`. The numbers start from libphonenumber's example numbers of every supported region
(mobile, fixed line, toll-free), with digits redrawn until the library calls them valid for the
region and of the example's type, so the set measures finding and delimiting, not the library's
judgment of validity. Each number is written twice, once with a country code and once without
(a tenth of those in full-width digits, in zh or ja frames); a toll-free number once.
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter

import phonenumbers as pn

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


def main(argv: list[str] | None, part: str, make, doc: str) -> int:
    """Counts of the part by form, kind, phone word and language; `--show N` prints its first
    N sentences (not while tuning)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--show", type=int, default=0, help="sentences to print (0; not while tuning)")
    args = ap.parse_args(argv)
    items = make()
    n_phones = sum(len(s) for _, s, _ in items)
    print(f"{part}: {len(items)} sentences, {n_phones} phones, {len(regions())} regions")
    for key in ("form", "kind", "word", "lang"):
        counts = Counter(str(info.get(key, "-")) for _, _, info in items)
        print(f"  by {key}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    for text, _, info in items[: args.show]:
        print(f"  {info['form']:<20} {text!r}")
    return 0
