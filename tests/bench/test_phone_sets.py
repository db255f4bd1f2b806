"""The generated phone set (`bench.data.phone_sets`): every part frozen as a data file, small
and made only of its own frames and values (no other text); the parts made by `generate` still
made by it from their inputs; each part's labelled phones valid for their region, of the
example's type and labelled exactly, its hard negatives plain, and each part fresh against the
older ones. It checks the sets only; it never runs the `pii` stage on them (`held_out_6` is the
reporting part)."""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import re
from collections import Counter
from dataclasses import dataclass

import phonenumbers as pn
import pytest

from bench.data import phone_sets as ps


@dataclass(frozen=True)
class Part:
    name: str
    min_not_phones: int  # hard negative values at the least (each in two sentences)
    plain_frames: bool = True  # no digits in its frames (held_out_3's have some: "£180")
    min_glued: int = 0  # frames with the number glued to the word before it
    negatives_per_phone: tuple[float, float] | None = None  # bounds of negatives / phones

    @property
    def spec(self) -> dict:
        return ps.inputs()[self.name]


PARTS = [
    Part("held_out_3", min_not_phones=40, plain_frames=False),
    Part("held_out_4", min_not_phones=100),
    Part("held_out_5", min_not_phones=120, min_glued=10),
    Part("held_out_6", min_not_phones=150, min_glued=10, negatives_per_phone=(0.22, 0.31)),
]


@functools.cache
def _loaded(name: str) -> tuple:
    return tuple(ps.load(name))


@pytest.fixture(scope="module", params=PARTS, ids=lambda p: p.name)
def part(request) -> Part:
    return request.param


@pytest.fixture(scope="module")
def items(part):
    return list(_loaded(part.name))


def _older(part: Part) -> list[str]:
    return list(ps.PARTS[: ps.PARTS.index(part.name)])


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


def _frames(name: str) -> set[str]:
    return {f for w, n in ps.inputs()[name]["frames"].values() for f in w + n}


@pytest.mark.slow
def test_the_frozen_part_is_what_the_generator_makes(part, items):
    assert ps.make(part.name) == items


@pytest.mark.parametrize("name", ps.PARTS)
def test_every_sentence_is_a_frame_of_its_part_and_a_value(name):
    """Only generated text: each sentence is one of its part's frames (of its language) with a
    number or a hard negative of the part put in."""
    spec = ps.inputs()[name]
    negatives = set(spec["not_phones"])
    for text, gold, info in _loaded(name):
        word, plain = spec["frames"][info["lang"]]
        heads = [f.split("{}") for f in word + plain]
        value = [
            text[len(a) : len(text) - len(b)]
            for a, b in heads
            if text.startswith(a) and text.endswith(b) and len(a) + len(b) <= len(text)
        ]
        assert value, (name, text)
        if gold:
            assert any(text[gold[0][0] : gold[0][1]] == v for v in value), (name, text)
        else:
            assert negatives & set(value), (name, text)


def test_the_frozen_files_are_small():
    files = list(ps.DATA.iterdir())
    assert {f.name for f in files} >= {f"phone_{p}.jsonl" for p in ps.PARTS}
    assert sum(f.stat().st_size for f in files) < 1_000_000


def test_size_and_mix(part, items):
    phones = [(t, g, i) for t, g, i in items if g]
    negatives = [i for _, g, i in items if not g]
    assert 950 <= len(phones) <= 1250
    assert len(part.spec["not_phones"]) >= part.min_not_phones
    assert len(negatives) == 2 * len(part.spec["not_phones"])
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
    assert full and all(i["lang"] in ps.CJK for i in full)
    langs = {i["lang"] for _, _, i in items}
    assert len(langs) >= 25 and {"zh", "ja", "ko", "th", "ar", "hi", "ru"} <= langs
    assert langs == set(part.spec["frames"])
    assert {i["region"] for _, _, i in phones} == set(ps.regions())


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
            assert pn.number_type(num) in ps.KINDS[kind], (text, info)
            # the span is the number: it starts with one and ends with its last digits (AR's
            # mobile `011 15-…` has an NSN of other leading digits, hence only the tail)
            assert written[0] in "+(０１２３４５６７８９＋（" or written[0].isdigit(), (text, info)
            assert _digits(written).endswith(pn.national_significant_number(num)[-4:])


def test_frames_and_negatives_are_plain(part):
    frames = _frames(part.name)
    for lang, (word, plain) in part.spec["frames"].items():
        assert word and plain, lang
    for frame in frames:
        assert frame.count("{}") == 1 and frame.count("{") == 1, frame
        if part.plain_frames:
            assert not re.search(r"\d", frame), frame  # the only number is the one put in
    assert len([f for f in frames if re.search(r"\w\{\}", f)]) >= part.min_glued  # glued
    assert any(re.search(r"[（：｜]\{\}", f) for f in frames)  # full-width marks
    values = part.spec["not_phones"]
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


@pytest.mark.slow
def test_fresh_against_the_older_parts(part, items):
    older = _older(part)
    older_items = [item for name in older for item in _loaded(name)]
    assert not _hashes(items) & _hashes(older_items)
    assert not _numbers(items) & _numbers(older_items)  # new draws
    assert not _frames(part.name) & set().union(*map(_frames, older))
    older_values = {v for name in older for v in ps.inputs()[name]["not_phones"]}
    assert not set(part.spec["not_phones"]) & older_values
    assert part.spec["seed"] not in {ps.inputs()[name].get("seed") for name in older}
