import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.dedup.url import BadURL, UrlDedup, UrlDedupParams, normalize_url
from tests.conftest import rejected_records, run_step, stats
from tests.stages.global_stage import run_global

ORDER = {"web": 0, "books": 1}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # scheme and host case
        ("HTTP://Example.COM/Path", "http://example.com/Path"),
        # www. prefix, and only as a prefix
        ("http://www.example.com/", "http://example.com/"),
        ("http://wwwexample.com/", "http://wwwexample.com/"),
        ("http://example.www.com/", "http://example.www.com/"),
        # default ports, and only the scheme's own
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:80/a", "https://example.com:80/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        # fragment
        ("http://example.com/a#section-2", "http://example.com/a"),
        # tracking parameters: utm_* prefix, fbclid, gclid, case-insensitive names
        ("http://example.com/?utm_source=x&utm_medium=y&id=3", "http://example.com/?id=3"),
        ("http://example.com/?fbclid=abc&gclid=def", "http://example.com/"),
        ("http://example.com/?UTM_Campaign=x&q=1", "http://example.com/?q=1"),
        # remaining query parameters sorted, empty pieces dropped, values kept
        ("http://example.com/?b=2&a=1&&c", "http://example.com/?a=1&b=2&c"),
        ("http://example.com/?a=2&a=1", "http://example.com/?a=1&a=2"),
        # percent-escapes: unreserved decoded, others upper-cased
        ("http://example.com/%7Euser/%61bc", "http://example.com/~user/abc"),
        ("http://example.com/a%2fb?q=%3d", "http://example.com/a%2Fb?q=%3D"),
        # what must be escaped is: spaces, non-ASCII, a stray percent sign
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://example.com/café", "http://example.com/caf%C3%A9"),
        ("http://example.com/100%", "http://example.com/100%25"),
        # trailing slash (not the root), empty path, dot segments, doubled slashes
        ("http://example.com/a/b/", "http://example.com/a/b"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com//a//b", "http://example.com/a/b"),
        # internationalised hosts: Unicode and punycode spellings are one host
        ("http://Bücher.example/", "http://xn--bcher-kva.example/"),
        ("http://xn--bcher-kva.example/", "http://xn--bcher-kva.example/"),
        ("http://www.例え.jp/", "http://xn--r8jz45g.jp/"),
        # a trailing dot on the host, IPv6 literals, user info
        ("http://example.com./a", "http://example.com/a"),
        ("http://[2001:DB8::1]:80/", "http://[2001:db8::1]/"),
        ("http://user@Example.com/", "http://user@example.com/"),
        # surrounding whitespace
        ("  http://example.com/a \n", "http://example.com/a"),
    ],
)
def test_normalisation_rules(url, expected):
    assert normalize_url(url) == expected


def test_configured_tracking_parameters():
    params = ("ref", "session*")
    url = "http://example.com/?ref=x&sessionid=1&utm_source=y"
    assert normalize_url(url, params) == "http://example.com/?utm_source=y"


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1",  # unbalanced IPv6 bracket
        "http://example.com:99999/",  # port out of range
        "http://example.com:port/",  # port not a number
        "example.com/no-scheme",
        "/relative/path",
        "mailto:someone@example.com",  # no host
        "http://exa mple.com/",  # space in the host
        "http://a..b/",  # empty label
        "http://" + "x" * 64 + ".com/",  # label over 63 characters
        "http://exa\x00mple.com/",  # control character
        "http://example.com/\ud800",  # lone surrogate: not encodable
        "",
    ],
)
def test_malformed_urls_raise_bad_url(url):
    with pytest.raises(BadURL):
        normalize_url(url)


def doc(doc_id, url, text="some text", source="web", origin="real", **meta) -> Document:
    meta = {"source": source, "origin": origin, **meta}
    if url is not None:
        meta["url"] = url
    return Document(text=text, id=doc_id, metadata=meta)


def decisions(tmp_path, corpus, tasks=1, **params):
    kept, dropped = run_global(
        UrlDedup, corpus, tmp_path, tasks, UrlDedupParams(**params), order=ORDER
    )
    return {k: None for k in kept} | {k: d.metadata["duplicate_of"] for k, d in dropped.items()}


def test_one_document_per_normalised_url(tmp_path):
    corpus = [
        doc("a", "http://www.example.com/page/?utm_source=feed"),
        doc("b", "https://example.com/page"),  # another scheme: another address
        doc("c", "HTTP://example.com:80/page#top"),
        doc("d", "http://example.com/other"),
    ]
    assert decisions(tmp_path, corpus) == {"a": None, "b": None, "c": "a", "d": None}


def test_malformed_and_missing_urls_are_kept_and_counted(tmp_path):
    corpus = [
        doc("a", "http://[::1"),
        doc("b", "http://[::1"),  # the same bad string twice: still never a duplicate
        doc("c", None),
        doc("d", 42),
        doc("e", "http://example.com/"),
    ]
    kept, _ = run_global(UrlDedup, corpus, tmp_path, 1, order=ORDER)
    assert set(kept) == {"a", "b", "c", "d", "e"}
    assert [kept[k].metadata["url_normalized"] for k in "abcde"] == [
        None,
        None,
        None,
        None,
        "http://example.com/",
    ]
    step = UrlDedup(ctx=StageContext(work=tmp_path / "again")).map_step()
    run_step(step, [doc(d.id, d.metadata.get("url")) for d in corpus])
    assert stats(step) == {
        "seen": 5,
        "kept": 5,
        "url_malformed": 2,
        "url_missing": 2,
        "signatures": 1,
    }


def test_survivor_real_before_synthetic_then_source_then_longest_then_id(tmp_path):
    url = "http://example.com/"
    corpus = [
        doc("s", url, "the longest text of them all, but synthetic", origin="synthetic"),
        doc("b", url, "a long text from the second source", source="books"),
        doc("w2", url, "short"),
        doc("w3", url, "longer text"),
        doc("w1", url, "longer text"),  # as long as w3: the smaller id wins
    ]
    assert decisions(tmp_path, corpus) == {"s": "w1", "b": "w1", "w2": "w1", "w3": "w1", "w1": None}
    assert decisions(tmp_path / "short", corpus, prefer="shortest")["w2"] is None
    assert decisions(tmp_path / "none", corpus, prefer="none")["w1"] is None


@pytest.mark.parametrize("tasks", [2, 4])
def test_same_decisions_for_any_number_of_tasks(tmp_path, tasks):
    corpus = [
        doc(f"d{i}", f"http://example.com/{i % 7}/?utm_id={i}", "x" * (i % 5)) for i in range(40)
    ]
    assert decisions(tmp_path / "n", corpus, tasks) == decisions(tmp_path / "1", corpus, 1)


def test_rejected_records_carry_reason_and_survivor(tmp_path):
    corpus = [doc("a", "http://example.com/x"), doc("b", "http://www.example.com/x/")]
    run_global(UrlDedup, corpus, tmp_path, 1, order=ORDER)
    recs = rejected_records(tmp_path / "rejected" / "url_dedup" / "00000.jsonl.zst")
    assert [(r["id"], r["reason"], r["metadata"]["duplicate_of"]) for r in recs] == [
        ("b", "duplicate_url", "a")
    ]
    assert recs[0]["metadata"]["url_normalized"] == "http://example.com/x"
