"""bench/phone_set3.py to phone_set6.py, the parts `held_out_3` to `held_out_6` of the generated
phone set (made by bench/phone_parts.py): each deterministic, every labelled phone valid for its
region, of the example's type and labelled exactly, hard negatives plain, and fresh against the
older parts. It checks the sets only; it never runs the `pii` stage on them (held_out_6 is the
reporting part)."""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import phonenumbers as pn
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import phone_parts  # noqa: E402
import phone_set  # noqa: E402
import phone_set2  # noqa: E402
import phone_set3  # noqa: E402
import phone_set4  # noqa: E402
import phone_set5  # noqa: E402
import phone_set6  # noqa: E402

MODULES = {3: phone_set3, 4: phone_set4, 5: phone_set5, 6: phone_set6}


@dataclass(frozen=True)
class Part:
    n: int  # bench/phone_set{n}.py
    min_not_phones: int  # hard negative values at the least (each in two sentences)
    plain_frames: bool = True  # no digits in its frames (held_out_3's have some: "£180")
    min_glued: int = 0  # frames with the number glued to the word before it
    negatives_per_phone: tuple[float, float] | None = None  # bounds of negatives / phones

    @property
    def module(self):
        return MODULES[self.n]


PARTS = [
    Part(3, min_not_phones=40, plain_frames=False),
    Part(4, min_not_phones=100),
    Part(5, min_not_phones=120, min_glued=10),
    Part(6, min_not_phones=150, min_glued=10, negatives_per_phone=(0.22, 0.31)),
]


@functools.cache
def _made(name: str) -> tuple:
    """Every part's items, made once a session: `tune`, `held_out`, `held_out_2`, 3 to 6."""
    if name in phone_set.PARTS:
        return tuple(phone_set.make(name))
    return tuple(phone_set2.make() if name == "2" else MODULES[int(name)].make())


@pytest.fixture(scope="module", params=PARTS, ids=lambda p: p.module.PART)
def part(request) -> Part:
    return request.param


@pytest.fixture(scope="module")
def items(part):
    return list(_made(str(part.n)))


def _older(part: Part) -> list:
    names = [*phone_set.PARTS, "2", *(str(n) for n in range(3, part.n))]
    return [item for name in names for item in _made(name)]


def _digits(s: str) -> str:
    return "".join(str(int(c)) for c in s if c.isdigit())  # full-width digits too


def _hashes(items) -> set[str]:
    return {hashlib.sha256(text.encode()).hexdigest() for text, _, _ in items}


def _numbers(items) -> set[tuple[int, str]]:
    out = set()
    for text, gold, info in items:
        for start, end, _ in gold:
            written = text[start:end].translate({0xFF0B: "+", 0xFF08: "(", 0xFF09: ")"})
            written = re.sub(r"^00", "+", "".join(_digits(c) or c for c in written))
            num = pn.parse(written, info["region"])
            out.add((num.country_code, pn.national_significant_number(num)))
    return out


def _frames(module) -> set[str]:
    if module is phone_set:
        return {
            f for d in (phone_set.FRAMES, phone_set.HELD_OUT_FRAMES) for p in d.values() for f in p
        }
    return {f for w, n in module.FRAMES.values() for f in w + n}


def test_deterministic(part, items):
    assert part.module.make() == items


def test_size_and_mix(part, items):
    phones = [(t, g, i) for t, g, i in items if g]
    negatives = [i for _, g, i in items if not g]
    assert 950 <= len(phones) <= 1250
    assert len(part.module.NOT_PHONES) >= part.min_not_phones
    assert len(negatives) == 2 * len(part.module.NOT_PHONES)
    if part.negatives_per_phone:
        low, high = part.negatives_per_phone
        assert low < len(negatives) / len(phones) < high
    assert all(i["form"] == "not_phone" for i in negatives)
    assert Counter(i["word"] for i in negatives) == {
        True: len(negatives) // 2,
        False: len(negatives) // 2,
    }
    with_cc = sum(i["form"].startswith(("intl", "e164")) for _, _, i in phones)
    assert 0.4 < with_cc / len(phones) < 0.6
    kinds = Counter(i["kind"] for _, _, i in phones)
    assert set(kinds) == {"mobile", "fixed", "toll_free"} and kinds["toll_free"] < kinds["fixed"]
    full = [i for _, _, i in phones if i["form"] == "national_fullwidth"]
    assert full and all(i["lang"] in phone_parts.CJK for i in full)
    langs = {i["lang"] for _, _, i in items}
    assert len(langs) >= 25 and {"zh", "ja", "ko", "th", "ar", "hi", "ru"} <= langs
    assert langs == set(part.module.FRAMES)
    assert {i["region"] for _, _, i in phones} == set(phone_parts.regions())


def test_every_label_is_a_valid_number_of_its_region(items):
    names = {"mobile": pn.PhoneNumberType.MOBILE, "fixed": pn.PhoneNumberType.FIXED_LINE}
    for text, gold, info in items:
        assert len(gold) <= 1
        for start, end, label in gold:
            assert label == "phone"
            written = text[start:end]
            assert written == written.strip() and _digits(written[-1]), (text, info)
            assert not text[end : end + 1].isdigit() and not text[start - 1 : start].isdigit()
            parsable = written.translate({0xFF0B: "+", 0xFF08: "(", 0xFF09: ")", 0xFF0D: "-"})
            parsable = re.sub(r"^00", "+", parsable)
            num = pn.parse(parsable, info["region"])
            assert pn.is_valid_number_for_region(num, info["region"]), (text, info)
            kind = names.get(info["kind"], pn.PhoneNumberType.TOLL_FREE)
            assert pn.number_type(num) in phone_parts.KINDS[kind], (text, info)
            # the span is the number: it starts with one and ends with its last digits (AR's
            # mobile `011 15-…` has an NSN of other leading digits, hence only the tail)
            assert written[0] in "+(０１２３４５６７８９＋（" or written[0].isdigit(), (text, info)
            assert _digits(written).endswith(pn.national_significant_number(num)[-4:])


def test_frames_and_negatives_are_plain(part):
    frames = _frames(part.module)
    for lang, (word, plain) in part.module.FRAMES.items():
        assert word and plain, lang
    for frame in frames:
        assert frame.count("{}") == 1 and frame.count("{") == 1, frame
        if part.plain_frames:
            assert not re.search(r"\d", frame), frame  # the only number is the one put in
    assert len([f for f in frames if re.search(r"\w\{\}", f)]) >= part.min_glued  # glued
    assert any(re.search(r"[（：｜]\{\}", f) for f in frames)  # full-width marks
    values = part.module.NOT_PHONES
    assert len(set(values)) == len(values)
    for value in values:
        assert re.search(r"\d", value), value
        # no IP address and no Luhn-valid 12-19 digit run: other detectors' values
        for cand in re.findall(r"[\d.:]{7,}", value):
            with pytest.raises(ValueError):
                ipaddress.ip_address(cand)
        for run in re.findall(r"\d[\d -]{10,}\d", value):
            d = [int(c) for c in run if c.isdigit()]
            if 12 <= len(d) <= 19:
                total = sum(x if i % 2 == 0 else (2 * x - 9 if x > 4 else 2 * x)
                            for i, x in enumerate(reversed(d)))  # fmt: skip
                assert total % 10, value


def test_fresh_against_the_older_parts(part, items):
    older = _older(part)
    assert not _hashes(items) & _hashes(older)
    assert not _numbers(items) & _numbers(older)  # new draws
    earlier = [phone_set, phone_set2, *(MODULES[n] for n in range(3, part.n))]
    assert not _frames(part.module) & set().union(*map(_frames, earlier))
    assert not set(part.module.NOT_PHONES) & {v for m in earlier for v in m.NOT_PHONES}
    assert part.module.SEED not in {m.SEED for m in earlier[2:]}
