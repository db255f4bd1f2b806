"""bench/phone_set6.py, the `held_out_6` part of the generated phone set: deterministic, every
labelled phone valid for its region and labelled exactly, and fresh against the older parts. It
checks the set only; it never runs the `pii` stage on it (the part is held out)."""

from __future__ import annotations

import ipaddress
import re
import sys
from collections import Counter
from pathlib import Path

import phonenumbers as pn
import pytest

from tests.bench.test_phone_set4 import _digits, _frames, _hashes, _numbers

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import phone_set  # noqa: E402
import phone_set2  # noqa: E402
import phone_set3  # noqa: E402
import phone_set4  # noqa: E402
import phone_set5  # noqa: E402
import phone_set6  # noqa: E402


@pytest.fixture(scope="module")
def items():
    return phone_set6.make()


def test_deterministic(items):
    assert phone_set6.make() == items


def test_size_and_mix(items):
    phones = [(t, g, i) for t, g, i in items if g]
    negatives = [i for _, g, i in items if not g]
    assert 950 <= len(phones) <= 1250
    assert len(phone_set6.NOT_PHONES) >= 150
    assert len(negatives) == 2 * len(phone_set6.NOT_PHONES)
    assert 0.22 < len(negatives) / len(phones) < 0.31  # held_out_5: 306 to 1,156
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
    assert full and all(i["lang"] in phone_set5.CJK for i in full)
    langs = {i["lang"] for _, _, i in items}
    assert len(langs) >= 25 and {"zh", "ja", "ko", "th", "ar", "hi", "ru"} <= langs
    assert langs == set(phone_set6.FRAMES)
    assert {i["region"] for _, _, i in phones} == set(phone_set3.regions())


def test_every_label_is_a_valid_number_of_its_region(items):
    for text, gold, info in items:
        assert len(gold) <= 1
        for start, end, label in gold:
            assert label == "phone"
            written = text[start:end]
            assert written == written.strip() and _digits(written[0] + written[-1]), (text, info)
            assert not text[end : end + 1].isdigit() and not text[start - 1 : start].isdigit()
            parsable = written.translate({0xFF0B: "+", 0xFF08: "(", 0xFF09: ")", 0xFF0D: "-"})
            parsable = re.sub(r"^00", "+", parsable)
            num = pn.parse(parsable, info["region"])
            assert pn.is_valid_number_for_region(num, info["region"]), (text, info)
            kind = {"mobile": pn.PhoneNumberType.MOBILE, "fixed": pn.PhoneNumberType.FIXED_LINE}
            kind = kind.get(info["kind"], pn.PhoneNumberType.TOLL_FREE)
            assert pn.number_type(num) in phone_set3.KINDS[kind], (text, info)
            assert _digits(written).endswith(pn.national_significant_number(num)[-4:])


def test_frames_and_negatives_are_plain(items):
    for lang, (word, plain) in phone_set6.FRAMES.items():
        assert word and plain, lang
        for frame in word + plain:
            assert frame.count("{}") == 1 and frame.count("{") == 1, frame
            assert not re.search(r"\d", frame), frame  # the only number is the one put in
    assert len(set(phone_set6.NOT_PHONES)) == len(phone_set6.NOT_PHONES)
    for value in phone_set6.NOT_PHONES:
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
    glued = [f for w, n in phone_set6.FRAMES.values() for f in w + n if re.search(r"\w\{\}", f)]
    assert len(glued) >= 10  # numbers glued to the script around them
    assert any(re.search(r"[（：｜]\{\}", f) for f in _frames(phone_set6))  # full-width marks


def test_fresh_against_the_older_parts(items):
    older = phone_set.make("tune") + phone_set.make("held_out")
    older += phone_set2.make() + phone_set3.make() + phone_set4.make() + phone_set5.make()
    assert not _hashes(items) & _hashes(older)
    assert not _numbers(items) & _numbers(older)  # new draws
    old_frames = {f for pair in phone_set.FRAMES.values() for f in pair}
    old_frames |= {f for pair in phone_set.HELD_OUT_FRAMES.values() for f in pair}
    for module in (phone_set2, phone_set3, phone_set4, phone_set5):
        old_frames |= _frames(module)
    assert not _frames(phone_set6) & old_frames
    old_values = set(phone_set.NOT_PHONES + phone_set2.NOT_PHONES + phone_set3.NOT_PHONES)
    old_values |= set(phone_set4.NOT_PHONES + phone_set5.NOT_PHONES)
    assert not set(phone_set6.NOT_PHONES) & old_values
    seeds = (phone_set3.SEED, phone_set4.SEED, phone_set5.SEED)
    assert phone_set6.SEED not in seeds
