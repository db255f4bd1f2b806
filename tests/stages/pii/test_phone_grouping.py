"""National numbers taken on their writing alone (`phones.plans.exact_grouping`): grouped exactly
as their country's national format, with no phone word and no country code, next to text of
every script; and what is grouped like a phone but is not (years, ranges, sizes, fingerprints,
hex dumps, tables, fractions, thousands, versions, addresses, a label's number)."""

import pytest

from gristmill.stages.pii.phones.context import crowded
from gristmill.stages.pii.phones.plans import exact_grouping
from gristmill.stages.pii.phones.shapes import suspicious
from gristmill.stages.pii.script import DIGITS
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


def test_grouped_elsewhere_is_not_enough():
    assert exact_grouping("21 62 97 27")
    assert not exact_grouping("2 16 29 727")  # the same digits split where no plan splits them
    assert exact_grouping("21629727")  # solid, as a plan with no trunk prefix writes it
    assert not exact_grouping("20240517")  # a date
    assert finds("Lena Berg, 2 16 29 727, ekonomi") == []


# a solid number with no trunk prefix: a field of a line of text, after a word and a comma,
# a dash or a full-width space, before the end of the line or such punctuation
SOLID = [
    "Lena Berg, 21629727, ekonomi", "Олена Коваль — 21629727", "山田花子様\u300021629727",
    "王伟、21629727。", "م. خالد العتيبي، 21629727", "คุณวิชัย, 21629727", "राहुल वर्मा, 21629727",
    "王伟，２１６２９７２７，市场部",  # full-width digits and comma
]  # fmt: skip
SOLID_NOT = [
    "Lena Berg 21629727 ekonomi", "the identifier (21629727).", "seed(21629727)",
    "; Retry\n21629727 ; Expire", "Bus, 21629727 km", "容量：21629727。", "容量，21629727字节",
    "Размер, 21629727 байт", "ขนาด 21629727 ไบต์", "الحجم، 21629727 بايت", "आकार 21629727",
    "Lena, 20240517, ekonomi",  # a date
]  # fmt: skip


@pytest.mark.parametrize("text", SOLID, ids=range(len(SOLID)))
def test_solid_numbers_set_off_as_a_field(text):
    assert [t for _, t in finds(text)] == ["phone"], text


@pytest.mark.parametrize("text", SOLID_NOT, ids=range(len(SOLID_NOT)))
def test_solid_numbers_elsewhere_are_left(text):
    assert finds(text) == [], text


# with dots: pairs (not a date), four groups (not an address), an area code with its trunk 0
DOTS = [
    ("Lambar waya: 06.12.34.56.78", "06.12.34.56.78"),  # France: 06.12.34 is not a date
    ("Frau Keller – 01-23-45-67-89 – Montag", "01-23-45-67-89"),
    ("电话：06.12.34.56.78。", "06.12.34.56.78"),
    ("โทร06.12.34.56.78ค่ะ", "06.12.34.56.78"),
    ("Lena Berg, +236.21.62.97.27", "+236.21.62.97.27"),  # a country code, dots
    ("Иван Петров, +236.216.297.27", "+236.216.297.27"),  # four groups after `+`
    ("Tel.: 21.62.97.27", "21.62.97.27"),  # an address's shape, a phone word, the groups
    ("電話 21.62.97.27", "21.62.97.27"),
    ("هاتف: 21.62.97.27", "21.62.97.27"),
    ("Anna Berg, 601.129.993, room 4", "601.129.993"),  # not an address (601)
    ("Frau Vogt, 020.79460958", "020.79460958"),  # an area code with its trunk 0, a dot
    ("山田花子様（020.79460958）", "020.79460958"),
    ("राहुल वर्मा – 020.79460958", "020.79460958"),
]
DOTS_NOT = [
    "arp_ip_target=+192.168.1.1", "server 21.62.97.27", "服务器 21.62.97.27",
    "ip: 21.62.97.27", "Tel.: 10.0.0.1",  # an address
    "Version 0.1234567", "π = 03.14159", "x 3.14159265", "Ana Gil, 12.05.2024, Kiev",
    "Дата: 06.12.2024", "วันที่ 06.12.24",
]  # fmt: skip


@pytest.mark.parametrize(("text", "number"), DOTS, ids=range(len(DOTS)))
def test_dots_pairs_and_four_groups(text, number):
    assert finds(text) == [(number, "phone")]


@pytest.mark.parametrize("text", DOTS_NOT, ids=range(len(DOTS_NOT)))
def test_addresses_decimals_and_dates_with_dots_are_not_phones(text):
    assert [t for _, t in finds(text) if t == "phone"] == [], text


@pytest.mark.parametrize(
    "text",
    ["Infolinia 467 3395", "मो. 467 3395", "ለበለጠ መረጃ ይደውሉ 467 3395", "Lambar waya: 467 3395",
     "Inombolo yocingo: 467 3395", "Nọ́mbà fóònù 467 3395", "Zalo: 467 3395"],
)  # fmt: skip
def test_more_phone_words(text):
    assert [t for _, t in finds(text)] == ["phone"], text


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
    "Ana Gil 7011366260 sales",
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


# short numbers of small plans (4 to 6 digits: New Caledonia, the Faroes, Saint Helena, Niue,
# Greenland) right after a phone word , and numbers glued after `word.`
SHORT = [
    ("Tel.: 752247 (çdo ditë)", "752247"), ("電話：752247まで", "752247"),
    ("電話：７５２２４７", "７５２２４７"), ("โทร. 51905 ค่ะ", "51905"), ("هاتف: 219032", "219032"),
    ("फ़ोन: 7023", "7023"), ("Телефон: 219032, Олена", "219032"), ("Pantanir í síma 51905", "51905"),
    ("Telefon 32 81 86", "32 81 86"), ("Утас: 752247", "752247"), ("දුරකථන: 219032", "219032"),
    ("โทร.0594 36 70 16หรือทางไลน์", "0594 36 70 16"), ("電話.604-3352まで", "604-3352"),
]  # fmt: skip


@pytest.mark.parametrize("text,number", SHORT, ids=range(len(SHORT)))
def test_short_numbers_after_a_phone_word(text, number):
    assert finds(text) == [(number, "phone")]


SHORT_NOT = [
    "Tel. 7.30-22.00", "Телефон: 2024", "電話：12.05", "Telefon 80331 München",
    "Тел. 21-17, 19-21, 15-12", "โทร. 〒530-0001", "هاتف: ₫ 1.250.000", "फ़ोन 2022/23",
    "部屋 752247", "ห้อง 51905", "غرفة 219032", "कमरा 7023", "Комната 219032",
    "SÍMBOLO DEL EURO 245 165 A5", "Tel.: 752247.5", "Tel. 7023abc", "文件.604-3352",
    "Телефон: 1234",  # valid in no plan
]  # fmt: skip


@pytest.mark.parametrize("text", SHORT_NOT, ids=range(len(SHORT_NOT)))
def test_short_look_alikes_are_left(text):
    assert finds(text) == []
