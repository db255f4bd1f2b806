"""National numbers taken on their writing alone (`pii_grouping`): grouped exactly as their
country's national format, with no phone word and no country code, next to text of every
script; and what is grouped like a phone but is not (years, ranges, sizes, fingerprints, hex
dumps, tables, fractions, thousands, versions, addresses, a label's number)."""

import pytest

from gristmill.stages.pii.grouping import DIGITS, crowded, exact_grouping, suspicious
from gristmill.stages.pii.stage import PLACEHOLDERS, Detector, PiiParams, redact

DEFAULT = Detector(PiiParams())


def finds(text: str, **params) -> list[tuple[str, str]]:
    det = Detector(PiiParams(**params)) if params else DEFAULT
    _, spans = redact(text, det, PLACEHOLDERS)
    return [(text[s:e], t) for s, e, t in spans]


# (text, the number): each valid in one region and written in its national format's groups
FOUND = [
    ("Lena Berg, 21 62 97 27, ekonomi", "21 62 97 27"),  # Central African Republic
    ("张先生（21 62 97 27）", "21 62 97 27"),
    ("คุณวิชัย (21 62 97 27)", "21 62 97 27"),
    ("م. خالد العتيبي - 21 62 97 27", "21 62 97 27"),
    ("राहुल वर्मा (21 62 97 27)", "21 62 97 27"),
    ("Олена Коваль — 21 62 97 27", "21 62 97 27"),
    ("山田花子様（２１ ６２ ９７ ２７）", "２１ ６２ ９７ ２７"),  # full-width digits and brackets
    ("Dña. Ortega · (246)\u00a0458-0628", "(246)\u00a0458-0628"),  # Barbados, a no-break space
    ("Chez Martin – 601 129 993 – 3e étage", "601 129 993"),  # Czechia
    ("박지훈 과장(601 129 993)", "601 129 993"),
    ("王伟：601-129-993。", "601-129-993"),
    ("คุณวิชัย601 129 993ฝ่ายขาย", "601 129 993"),  # glued to Thai on both sides
    ("Ана Гил, 8 (301) 127-45-52", "8 (301) 127-45-52"),  # Russia, the trunk 8
    ("Bpk. Budi, 233 0360", "233 0360"),  # Brunei: 7 digits, set off by a comma
    ("Frau Vogt, 030/7093421", "030/7093421"),  # the area code, a slash, the rest
    ("Sr. João Silva — 0612865908", "0612865908"),  # solid with a trunk prefix
]


@pytest.mark.parametrize(("text", "number"), FOUND, ids=range(len(FOUND)))
def test_numbers_grouped_as_their_country_writes_them(text, number):
    assert finds(text) == [(number, "phone")]


def test_only_with_star_in_phone_regions():
    assert finds("Lena Berg, 21 62 97 27, ekonomi", phone_regions=["US", "GB"]) == []


def test_grouped_elsewhere_or_solid_without_trunk_is_not_enough():
    assert exact_grouping("21 62 97 27")
    assert not exact_grouping("2 16 29 727")  # the same digits split where no plan splits them
    assert not exact_grouping("21629727")  # solid, no trunk prefix: an id as often
    assert finds("Lena Berg, 2 16 29 727, ekonomi") == []


# grouped like a phone of some plan, and refused by `suspicious` for what they are
SUSPICIOUS = [
    "1998-2004", "2019 2020", "1588-2002", "2019-1130",  # years: ranges, a standard's, a decree's
    "25 11 2020",  # a date written with spaces
    "1920 1080", "3840 2160",  # screen sizes
    "810/815", "2430/3430", "878/879",  # alternatives: Intel 810/815
    "413 225-233", "31-47 48-64", "041-0176",  # ranges
    "183/1426", "750 / 1000", "512/16/32", "32 157/158",  # fractions, ratios, page references
    "28.37516",  # a decimal
    "13 960 236", "24.283.332", "1 500 820",  # thousands
    "40 41 42 43", "0123456789",  # counting
    "9.1.3.6.27", "1384 18 0 0",  # sections, table columns
]  # fmt: skip


@pytest.mark.parametrize("chunk", SUSPICIOUS)
def test_what_is_grouped_like_a_phone_but_is_not(chunk):
    assert suspicious(DIGITS.findall(chunk), DIGITS.split(chunk)), chunk
    assert not exact_grouping(chunk)


# in text: the neighbours say what the number is (`crowded`), or a guard above does
NOT_FOUND = [
    "Copyright 1998-2004 Intel", "年份：2019 2020。", "IEEE 1588-2002 标准", "分辨率 1920 1080",
    "Resolution 1024 768", "指纹：647F 2865 4894 E3BD 4571",  # a key fingerprint
    "Primary key fingerprint: 647F 2865 4894 E3BD 4571 99BE", "版本 10.0.22631.3447",
    "10 AD 94 BD 16 53 84 30 BF 70",  # a hex dump
    "X 285 316 1680\nX 563 624 1680",  # a table's column
    "117 79 4F O 020 16 10 DLE 120 80 50 P",  # an ASCII table written out
    "人口 13 960 236", "Население 13 960 236 человек", "48.442.368 байт", "ratio 183/1426",
    "(750 / 1000)", "Minix 512/16/32", "ページ 413 225-233", "Bit 31-47 48-64",
    "使用 041-0176 之间的编码", "Date: Tue Oct 7 07:26:38 2014 -0400", "ตั้งแต่ 25 11 2020",
    "٢٠ 40 41 42 43", "b'0123456789'", "دقة 28.37516 MHz", "تاريخ 2019-1130",
    "पृष्ठ 32 157/158", "Intel 810/815", "OMAP 2430/3430",
    "Meet me at 7943 2027 Prospect St",  # a house number
    "Room 467 3395", "комната：467 3395。", "คุณวิชัย 467 3395", "कमरा 467 3395",  # a label's
    "Ana Gil, 7011366260, sales",
]  # fmt: skip


@pytest.mark.parametrize("text", NOT_FOUND, ids=range(len(NOT_FOUND)))
def test_look_alikes_in_every_script_are_left(text):
    assert finds(text) == []


def test_the_neighbours_decide():
    for text, number in (
        ("r-xp 00000000 fd:03 960637 /bin/bash Size: 552 kB", "03 960637"),
        ("Key: 647F 2865 4894 E3BD", "2865 4894"),
        ("X 285 316 1680\nX 563 624 1680", "285 316 1680"),
        ("at 7943 2027 Prospect St", "7943 2027"),
    ):
        s = text.index(number)
        assert crowded(text, s, s + len(number)), text
    text = "Lena Berg, 21 62 97 27, ekonomi"
    s = text.index("21")
    assert not crowded(text, s, s + 11)
