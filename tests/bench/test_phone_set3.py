"""bench/phone_set3.py, the `held_out_3` part of the generated phone set: deterministic, every
labelled phone valid for its region and labelled exactly, and fresh against the older parts. It
checks the set only; it never runs the `pii` stage on it (the part is held out)."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import phonenumbers as pn
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import phone_set  # noqa: E402
import phone_set2  # noqa: E402
import phone_set3  # noqa: E402


@pytest.fixture(scope="module")
def items():
    return phone_set3.make()


def _digits(s: str) -> str:
    return "".join(str(int(c)) for c in s if c.isdigit())  # full-width digits too


def _hashes(items) -> set[str]:
    return {hashlib.sha256(text.encode()).hexdigest() for text, _, _ in items}


def test_deterministic(items):
    assert phone_set3.make() == items


def test_size_and_mix(items):
    phones = [(t, g, i) for t, g, i in items if g]
    negatives = [i for _, g, i in items if not g]
    assert 950 <= len(phones) <= 1250
    assert len(negatives) >= 80 and all(i["form"] == "not_phone" for i in negatives)
    assert {i["word"] for i in negatives} == {True, False}
    with_cc = sum(i["form"].startswith(("intl", "e164")) for _, _, i in phones)
    assert 0.4 < with_cc / len(phones) < 0.6
    langs = {i["lang"] for _, _, i in items}
    assert len(langs) >= 25 and {"zh", "ja", "ko", "th", "ar", "hi", "ru"} <= langs
    assert {i["region"] for _, _, i in phones} == set(phone_set3.regions())


def test_every_label_is_a_valid_number_of_its_region(items):
    for text, gold, info in items:
        for start, end, label in gold:
            assert label == "phone"
            written = text[start:end]
            assert written == written.strip() and _digits(written[-1]), (text, info)
            assert not text[end : end + 1].isdigit() and not text[start - 1 : start].isdigit()
            parsable = written.translate({0xFF0B: "+", 0xFF08: "(", 0xFF09: ")", 0xFF0D: "-"})
            parsable = re.sub(r"^00", "+", parsable)
            num = pn.parse(parsable, info["region"])
            assert pn.is_valid_number_for_region(num, info["region"]), (text, info)
            # the span is the number: it starts with one and ends with its last digits (AR's
            # mobile `011 15-…` has an NSN of other leading digits, hence only the tail)
            assert written[0] in "+(０１２３４５６７８９＋（" or written[0].isdigit(), (text, info)
            assert _digits(written).endswith(pn.national_significant_number(num)[-4:])


def test_fresh_against_the_older_parts(items):
    older = phone_set.make("tune") + phone_set.make("held_out") + phone_set2.make()
    assert not _hashes(items) & _hashes(older)
    old_frames = {f for pair in phone_set.FRAMES.values() for f in pair}
    old_frames |= {f for pair in phone_set.HELD_OUT_FRAMES.values() for f in pair}
    old_frames |= {f for w, n in phone_set2.FRAMES.values() for f in w + n}
    new_frames = {f for w, n in phone_set3.FRAMES.values() for f in w + n}
    assert not new_frames & old_frames
    assert not set(phone_set3.NOT_PHONES) & set(phone_set.NOT_PHONES + phone_set2.NOT_PHONES)
