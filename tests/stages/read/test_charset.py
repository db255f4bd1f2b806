import codecs

import pytest

from gristmill.stages.read.charset import decode_html, header_charset, meta_charset, normalize_label

PAGE = "<p>Grüße aus Köln – ça va?</p>"


def test_header_charset_wins_over_meta():
    body = b'<meta charset="utf-8">' + PAGE.encode("cp1252")
    d = decode_html(body, "text/html; charset=ISO-8859-1")
    # ISO-8859-1 is read as windows-1252, as browsers do (the en dash is 0x96 there)
    assert (d.charset, d.source, d.errors) == ("cp1252", "header", 0)
    assert d.text.endswith(PAGE)


@pytest.mark.parametrize(
    "meta",
    [
        b'<meta charset="windows-1251">',
        b"<meta charset=windows-1251>",
        b'<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=windows-1251">',
    ],
)
def test_meta_charset_when_the_header_has_none(meta):
    text = "<p>Привет, мир</p>"
    d = decode_html(meta + text.encode("cp1251"), "text/html")
    assert (d.charset, d.source, d.errors) == ("cp1251", "meta", 0)
    assert d.text.endswith(text)


def test_bom_wins_over_everything():
    d = decode_html(codecs.BOM_UTF8 + PAGE.encode("utf-8"), "text/html; charset=iso-8859-1")
    assert (d.text, d.charset, d.source) == (PAGE, "utf-8", "bom")


def test_undeclared_utf8_and_undeclared_legacy():
    assert decode_html(PAGE.encode("utf-8")).source == "utf8"
    zh = "<p>这是一个关于中文网页编码检测的测试段落，内容足够长以便识别。</p>" * 4
    d = decode_html(zh.encode("gb18030"))
    assert (d.text, d.source, d.errors) == (zh, "detected", 0)


def test_undecodable_bytes_are_replaced_and_counted():
    d = decode_html(b"ok \xff\xfe then \xc3 end", "text/html; charset=utf-8")
    assert d.errors == 3 and d.text.count("\ufffd") == 3
    assert d.text.startswith("ok ") and d.text.endswith(" end")


def test_labels():
    assert normalize_label("GB2312") == "gb18030"
    assert normalize_label(" 'Shift_JIS' ") == "cp932"
    assert normalize_label("utf-16") == "utf-8"  # an ASCII page cannot be UTF-16
    assert normalize_label("no-such-charset") is None
    assert header_charset("text/html") is None
    assert header_charset('text/html; charset="UTF-8"') == "utf-8"
    assert meta_charset(b" " * 5000 + b"<meta charset=latin1>") is None  # beyond the prescan


def test_unknown_declared_label_falls_through():
    d = decode_html(PAGE.encode("utf-8"), "text/html; charset=x-made-up")
    assert (d.text, d.source) == (PAGE, "utf8")
