"""Regenerate the sample web archives in sample_data/crawl/ (deterministic), with warcio.

Run from the repository root: ``python sample_data/make_crawl.py``. The pages are built from
the sentence banks in ``_texts.py`` (written for this project) with ``random.Random(2024)``;
record ids and dates are fixed and warcio's per-record gzip has mtime 0, so reruns rewrite every
file byte for byte. ``configs/web.yaml`` reads these files; ``crawl/labels.tsv`` says, for each
record, what the WARC reader must make of it (tests/stages/read/test_sample_crawl.py checks it).

The archives hold what a crawl holds: HTML pages in several charsets (UTF-8 declared in the
HTTP header; windows-1252; ISO-8859-1 bytes that only windows-1252 decodes, as browsers do;
Shift_JIS declared only in a <meta>; GBK; a <meta> charset that contradicts the header, where
the header wins; no declaration at all), a 404, a redirect, a non-HTML response, request,
metadata and warcinfo records, an exact copy on a mirror host, a near copy, a refetch of a URL,
a page with (fake) personal data, a page too short to keep, a truncated last record, and a WET
file with Common Crawl-style text conversions.
"""

from __future__ import annotations

import hashlib
import random
from io import BytesIO
from pathlib import Path

import _fakes as F
import _texts as T
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

HERE = Path(__file__).resolve().parent
OUT = HERE / "crawl"
CJK = ("zh", "ja")
rng = random.Random(2024)
LABELS: list[list[str]] = []  # file, record, id, type, url, expect, charset, text_sha1, note
_serial = 0


def next_id() -> tuple[str, str]:
    """A fixed record id and date per record, in writing order."""
    global _serial
    _serial += 1
    n = _serial
    rid = f"<urn:uuid:00000000-0000-4000-8000-{n:012d}>"
    return rid, f"2024-05-{1 + n // 24:02d}T{n % 24:02d}:{(7 * n) % 60:02d}:00Z"


def sentences(lang: str, topic: str, k: int) -> list[str]:
    slots = {key: rng.choice(values) for key, values in T.SLOTS[lang].items()}
    slots["n"] = rng.randint(5, 20)
    y, m, d = 2024, rng.randint(1, 12), rng.randint(2, 28)
    month = T.MONTHS[lang][m - 1] if lang in T.MONTHS else ""
    slots["date"] = T.DATE_FORMATS[lang].format(y=y, m=m, d=d, month=month)
    bank = T.TOPICS[lang][topic]
    title = rng.choice(bank["titles"]).format_map(slots)
    return [title, *(s.format_map(slots) for s in rng.sample(bank["sentences"], k))]


def article(lang: str, topic: str, paras: int = 3, per: int = 4) -> tuple[str, list[str]]:
    """A title and paragraphs of ``per`` sentences from one topic bank."""
    title, *said = sentences(lang, topic, paras * per)
    sep = "" if lang in CJK else " "
    return title, [sep.join(said[i : i + per]) for i in range(0, len(said), per)]


def html(lang: str, site: str, title: str, paras: list[str], meta: str = "", foot: str = "") -> str:
    """A page with navigation, a cookie line and a footer around the article."""
    body = "\n".join(f"<p>{p}</p>" for p in paras)
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head>{meta}<title>{title} | {site}</title></head>\n'
        f'<body><header><nav><a href="/">{site}</a> | <a href="/archive/">2022</a> | '
        f'<a href="/archive/2023/">2023</a> | <a href="/archive/2024/">2024</a></nav></header>\n'
        f'<div class="cookies">cookies: ok</div>\n'
        f"<main><article><h1>{title}</h1>\n{body}\n</article></main>\n"
        f"<footer><p>&copy; 2024 {site}{foot}</p></footer></body></html>\n"
    )


def site_url(lang: str, topic: str, slug: str) -> tuple[str, str]:
    host, section, www, scheme = T.SITES[lang][topic]
    return host, f"{scheme}://{'www.' if www else ''}{host}/{section}/2024/{slug}"


class Archive:
    """One WARC or WET file: records are written and labelled in order."""

    def __init__(self, name: str, gzip: bool):
        self.name, self.buf = name, BytesIO()
        self.writer = WARCWriter(self.buf, gzip=gzip, warc_version="WARC/1.1")
        self.count = 0
        self.warcinfo()

    def add(self, uri, kind, payload=b"", http=None, content_type="", extra=None, **label):
        rid, date = next_id()
        headers = {"WARC-Record-ID": rid, "WARC-Date": date, **(extra or {})}
        record = self.writer.create_warc_record(
            uri,
            kind,
            payload=BytesIO(payload),
            length=len(payload),
            http_headers=http,
            warc_content_type=content_type,
            warc_headers_dict=headers,
        )
        self.writer.write_record(record)
        self.count += 1
        row = [self.name, str(self.count), rid.strip("<>"), kind, uri or ""]
        row += [label.get("expect", f"warc_{kind}")]
        row += [label.get("charset", ""), label.get("sha1", ""), label.get("note", "")]
        LABELS.append(row)
        return rid

    def warcinfo(self):
        fields = f"software: gristmill sample_data/make_crawl.py\r\nformat: {self.name}\r\n"
        self.add(
            None,
            "warcinfo",
            fields.encode(),
            content_type="application/warc-fields",
            extra={"WARC-Filename": self.name},
            note="file header",
        )

    def fetch(self, url, status, headers, body: bytes, **label):
        """A request record, then the response."""
        host = url.split("/")[2]
        path = "/" + url.split("/", 3)[3]
        req = StatusAndHeaders(
            f"GET {path} HTTP/1.1",
            [("Host", host), ("User-Agent", "gristmill-sample")],
            is_http_request=True,
        )
        self.add(url, "request", http=req, note="what the crawler sent")
        http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
        return self.add(url, "response", body, http=http, **label)

    def page(self, url, text: str, charset: str, ctype: str, note: str, status="200 OK"):
        """An HTML response: ``text`` encoded in ``charset``, served as ``ctype``."""
        codec = {"windows-1252": "cp1252", "shift_jis": "cp932", "gbk": "gb18030"}
        body = text.encode(codec.get(charset, charset))
        headers = [("Content-Type", ctype), ("Content-Length", str(len(body)))]
        sha1 = hashlib.sha1(text.encode()).hexdigest()
        expect = "document" if status.startswith("200") else f"http_{status[:3]}"
        decoded_as = codec.get(charset, charset) if expect == "document" else ""
        return self.fetch(
            url, status, headers, body, expect=expect, charset=decoded_as, sha1=sha1, note=note
        )

    def write(self, cut: int = 0):
        """Write the file; ``cut`` bytes are taken off its end (a truncated last record)."""
        data = self.buf.getvalue()
        (OUT / self.name).write_bytes(data[: len(data) - cut])


def crawl_00000() -> dict[str, tuple[str, list[str]]]:
    """The per-record gzip WARC. Returns url -> (title, paragraphs) of pages the WET repeats."""
    warc, pages = Archive("crawl-00000.warc.gz", gzip=True), {}

    def page(lang, topic, slug, charset, ctype, note, meta="", foot="", paras=3):
        title, body = article(lang, topic, paras)
        host, url = site_url(lang, topic, slug)
        rid = warc.page(url, html(lang, host, title, body, meta, foot), charset, ctype, note)
        pages[url] = (title, body)
        return url, host, title, body, rid

    url1, host1, title1, body1, rid1 = page(
        "en", "cooking", "slow-onions", "utf-8", "text/html; charset=utf-8", "header utf-8"
    )
    warc.add(
        url1,
        "metadata",
        b"fetchTimeMs: 212\r\ncharset-detected: UTF-8\r\n",
        content_type="application/warc-fields",
        extra={"WARC-Concurrent-To": rid1},
        note="crawler metadata",
    )
    page(
        "de",
        "gardening",
        "beete-im-mai",
        "windows-1252",
        "text/html; charset=windows-1252",
        "header windows-1252",
    )
    page(
        "fr",
        "travel",
        "week-end-au-bord-du-lac",
        "windows-1252",
        "text/html; charset=ISO-8859-1",
        "header ISO-8859-1; bytes 0x80-0x9F (œ, €) only windows-1252 decodes, as browsers do",
        foot=" — le cœur du voyage, abonnement 3 € par mois",
    )
    page(
        "ja",
        "bicycles",
        "chain-care",
        "shift_jis",
        "text/html",
        "no charset in the header; Shift_JIS in a <meta http-equiv>",
        meta='<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">',
    )
    page("zh", "weather", "spring-rain", "gbk", "text/html; charset=GBK", "header GBK")
    page(
        "ru",
        "town",
        "staraya-ploshchad",
        "utf-8",
        "text/html; charset=utf-8",
        "header utf-8, <meta> says windows-1251: the header wins",
        meta='<meta charset="windows-1251">',
    )
    page("es", "cooking", "sopa-de-verduras", "utf-8", "text/html", "no charset anywhere: UTF-8")

    missing = "https://kitchen-notes.example.com/recipes/2024/old-page"
    gone = html("en", host1, "Page not found", ["Sorry, this page does not exist any more."])
    warc.page(missing, gone, "utf-8", "text/html; charset=utf-8", "404", status="404 Not Found")
    moved = [("Location", url1), ("Content-Length", "0")]
    warc.fetch(
        url1.replace("https://", "http://"),
        "301 Moved Permanently",
        moved,
        b"",
        expect="http_301",
        note="redirect to https",
    )
    robots = b"User-agent: *\nDisallow: /private/\n"
    warc.fetch(
        f"https://{host1}/robots.txt",
        "200 OK",
        [("Content-Type", "text/plain"), ("Content-Length", str(len(robots)))],
        robots,
        expect="not_html",
        note="non-HTML response",
    )
    refetch = body1 + [sentences("en", "cooking", 3)[1]]
    warc.page(
        url1,
        html("en", host1, title1, refetch),
        "utf-8",
        "text/html; charset=utf-8",
        "refetch of the first page's URL, one sentence added",
    )
    mirror = f"https://readlater.example.com/story/{hashlib.sha1(url1.encode()).hexdigest()[:10]}"
    warc.page(
        mirror,
        html("en", "readlater.example.com", title1, refetch),
        "utf-8",
        "text/html; charset=utf-8",
        "exact copy of the refetched first page on a mirror",
    )

    title, body = article("en", "travel", 4, 3)
    host, url = site_url("en", "travel", "ferry-timetable")
    warc.page(
        url, html("en", host, title, body), "utf-8", "text/html; charset=utf-8", "header utf-8"
    )
    near = body[:-1] + [body[-1] + " " + sentences("en", "travel", 2)[1]]
    warc.page(
        url + "-updated",
        html("en", host, title, near),
        "utf-8",
        "text/html; charset=utf-8",
        "near copy of the previous page: one sentence added",
    )
    _, url = site_url("en", "news", "notice")
    short = html("en", host, "Notice", ["The office is closed on Monday."])
    warc.page(url, short, "utf-8", "text/html; charset=utf-8", "too short to keep")
    warc.write()
    return pages


def crawl_00001() -> None:
    """An uncompressed WARC whose last record is cut short (as when a crawl is killed)."""
    warc = Archive("crawl-00001.warc", gzip=False)
    for lang, topic, slug in [("zh", "travel", "old-town-walk"), ("en", "history", "mill-pond")]:
        title, body = article(lang, topic)
        note = "header utf-8"
        if lang == "en":
            values = F.pii_values(rng, "en", ["email", "phone_us"])
            body[1] += " " + T.PII_TEMPLATES["en"][0].format_map(values)
            note = "fake e-mail address and phone number"
        host, url = site_url(lang, topic, slug)
        warc.page(url, html(lang, host, title, body), "utf-8", "text/html; charset=utf-8", note)
    title, body = article("de", "town", 4, 3)
    host, url = site_url("de", "town", "marktplatz")
    warc.page(
        url,
        html("de", host, title, body),
        "utf-8",
        "text/html; charset=utf-8",
        "cut short: 300 bytes of its body are missing",
    )
    LABELS[-1][5:8] = ["truncated_record", "", ""]
    warc.write(cut=300 + 4)  # the body's tail and the record's closing CRLF CRLF


def wet(pages: dict[str, tuple[str, list[str]]]) -> None:
    """Common Crawl-style text conversions: two pages of the WARC again, and one only here."""
    wet = Archive("crawl-00000.warc.wet.gz", gzip=True)
    title, body = article("en", "weather", 3)
    _, only = site_url("en", "weather", "first-frost")
    items = [*list(pages.items())[:2], (only, (title, body))]
    for url, (title, body) in items:
        text = "\n".join([title, *body]) + "\n"
        sha1 = hashlib.sha1(text.encode()).hexdigest()
        note = "WET only" if url == only else "the WARC's page again, as CC's own text"
        wet.add(
            url,
            "conversion",
            text.encode(),
            content_type="text/plain",
            expect="document",
            charset="utf-8",
            sha1=sha1,
            note=note,
        )
    wet.write()


def main() -> None:
    OUT.mkdir(exist_ok=True)
    pages = crawl_00000()
    crawl_00001()
    wet(pages)
    head = ["file", "record", "id", "type", "url", "expect", "charset", "text_sha1", "note"]
    rows = ["\t".join(head), *("\t".join(r) for r in LABELS)]
    (OUT / "labels.tsv").write_text("\n".join(rows) + "\n", "utf-8")
    for path in sorted(OUT.iterdir()):
        print(f"{path.relative_to(HERE)}: {path.stat().st_size:,} bytes")
    kinds: dict[str, int] = {}
    for row in LABELS:
        kinds[row[5]] = kinds.get(row[5], 0) + 1
    print("records by what the reader makes of them:", dict(sorted(kinds.items())))


if __name__ == "__main__":
    main()
