"""`bench.data.grow` makes the corpus it records: the same bytes for a seed, the planted
copies at their rates and where it says, each document in its page's language and source,
unique ids and URLs, and sizes that follow the factor."""

import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from bench.data.grow import main
from bench.data.synthetic_corpus import jaccard
from gristmill.stages.formats.docio import AtomicWriter, read_records

# (lang, first code point, letters, word separator, sentence end)
SCRIPTS = [
    ("zh", 0x4E00, 400, "", "。"),
    ("ja", 0x3041, 80, "", "。"),
    ("ko", 0xAC00, 400, " ", "."),
    ("th", 0x0E01, 40, "", " "),
    ("ar", 0x0621, 26, " ", "."),
    ("hi", 0x0905, 40, " ", "।"),
    ("ru", 0x0430, 32, " ", "."),
    ("fr", 0xFF21, 26, " ", "！"),  # full-width Latin letters and punctuation
]


def fake_corpus(path: Path, pages: int = 25) -> None:
    rng, writer = random.Random(5), AtomicWriter(path)
    for lang, start, n, sep, end in SCRIPTS:

        def word():
            return "".join(chr(start + rng.randrange(n)) for _ in range(rng.randint(2, 6)))  # noqa: B023

        for p in range(pages):
            lines = []
            for _ in range(rng.randint(1, 12)):
                sents = [sep.join(word() for _ in range(rng.randint(3, 40))) + end
                         for _ in range(rng.randint(1, 5))]  # fmt: skip
                lines.append(" ".join(sents) if sep else "".join(sents))
            url = f"https://{lang}.example.org/docs/{p}.html"
            text = "\n".join(lines)
            writer.write_record({"id": f"{lang}/{p}", "text": text, "url": url, "lang": lang,
                                 "source": f"pkg-{lang}"})  # fmt: skip
    writer.close()


def grow(tmp: Path, name: str, *args: str) -> tuple[list[dict], dict]:
    out = tmp / name
    assert main(["--data", str(tmp / "c.jsonl.zst"), "-o", str(out), *args]) == 0
    docs = [r for f in sorted((out / "shards").glob("*.jsonl.zst")) for r in read_records(f)]
    return docs, json.loads((out / "planted.json").read_text())


def shard_bytes(tmp: Path, name: str) -> list[bytes]:
    return [f.read_bytes() for f in sorted((tmp / name / "shards").glob("*.zst"))]


@pytest.mark.slow
def test_grow_is_seeded_planted_as_recorded_and_keeps_languages(tmp_path):
    fake_corpus(tmp_path / "c.jsonl.zst")
    opts = ["--docs-per-shard", "500", "--exact", "0.1", "--near", "0.1", "--url-dups", "0.05"]
    docs, planted = grow(tmp_path, "a", "--factor", "10", "--seed", "3", *opts)
    grow(tmp_path, "b", "--factor", "10", "--seed", "3", *opts)
    grow(tmp_path, "c", "--factor", "10", "--seed", "4", *opts)
    assert shard_bytes(tmp_path, "a") == shard_bytes(tmp_path, "b")
    assert shard_bytes(tmp_path, "a") != shard_bytes(tmp_path, "c")
    assert len(docs) == planted["docs"] and planted["shards"] == 4
    assert 2000 <= len(docs) <= 2000 + 150  # a shard ends after its last family

    kinds = Counter(d["kind"] for d in docs)
    assert {k: kinds[k] for k in kinds} == {
        k: v for k, v in planted["planted"].items() if k not in ("families", "near_by_target")
    }
    new = kinds["new"] + kinds["url_dup"]  # drawn per new document
    assert abs(kinds["exact"] / new - 0.1) < 0.03
    assert abs(kinds["url_dup"] / new - 0.05) < 0.02
    assert kinds["near"] > 50 and kinds["template"] > 0  # only spaced texts get near copies

    by_id = {d["id"]: d for d in docs}
    assert len(by_id) == len(docs)
    urls = Counter(d["url"] for d in docs if d["kind"] != "url_dup")
    assert max(urls.values()) == 1
    assert all(d["url"] in urls for d in docs if d["kind"] == "url_dup")
    for d in docs:
        if d["kind"] == "exact":
            assert d["text"] == by_id[d["of"]]["text"]
        if d["kind"] == "near":
            assert abs(jaccard(d["text"], by_id[d["of"]]["text"]) - d["jaccard"]) < 1e-4

    letters = defaultdict(set)  # the characters of each language's pages
    for r in read_records(tmp_path / "c.jsonl.zst"):
        letters[r["lang"]] |= set(r["text"])
    for d in docs:
        assert d["package"] == f"pkg-{d['lang']}"
        if d["kind"] in ("new", "url_dup", "exact"):
            assert set(d["text"]) <= letters[d["lang"]], d["lang"]
    assert {d["lang"] for d in docs} == {s[0] for s in SCRIPTS}


def test_sizes_follow_the_factor(tmp_path):
    fake_corpus(tmp_path / "c.jsonl.zst")
    one, p1 = grow(tmp_path, "x1", "--factor", "1", "--docs-per-shard", "100")
    three, p3 = grow(tmp_path, "x3", "--factor", "3", "--docs-per-shard", "100")
    assert (p1["shards"], p3["shards"]) == (2, 6)
    assert 2.7 < len(three) / len(one) < 3.3
    assert 2.7 < p3["bytes"] / p1["bytes"] < 3.3
    assert p1["bytes"] == sum(len(d["text"].encode()) for d in one)
    part, pp = grow(tmp_path, "x3part", "--factor", "3", "--docs-per-shard", "100", "--shards", "2")
    assert pp["shards"] == 2 and shard_bytes(tmp_path, "x3part") == shard_bytes(tmp_path, "x3")[:2]


@pytest.mark.parametrize("lang, start, n, sep, end", SCRIPTS)
def test_a_line_or_sentence_a_page_repeats_gets_one_stand_in(lang, start, n, sep, end):
    """Quality reads a page's repeats (duplicate lines, n-grams): a grown page repeats a line
    and a sentence wherever its model page does, in every script; sentences after a mark that
    only ends sentences (。！ ।) are split with no space after it."""
    from bench.data.grow import SENTENCE, Group

    rng = random.Random(3)
    join = "" if end in "。！？।" else " "

    def sentence():
        words = ("".join(chr(start + rng.randrange(n)) for _ in range(rng.randint(2, 6)))
                 for _ in range(rng.randint(3, 12)))  # fmt: skip
        return sep.join(words) + end

    group = Group()
    for _ in range(30):  # stand-ins to draw from
        group.add({"text": "\n".join(sentence() + join + sentence() for _ in range(4))})
    said, other = sentence(), sentence()
    lines = [said + join + other, sentence() + join + sentence(), said + join + other]
    lines.append(said + join + sentence())  # the sentence again, in another line
    group.add({"text": "\n".join(lines)})
    shapes = group.pages[-1]["shapes"]
    for mix in (1.0, 0.0):  # every line drawn from other pages; none: its sentences drawn
        memo: dict = {}
        out = [group.line(own, s, rng, mix, memo) for own, s in zip(lines, shapes, strict=True)]
        assert out[0] == out[2]  # the repeated line
        if mix or lang == "th":  # Thai marks no sentence end: a line is one sentence
            assert mix or out == lines
            continue
        assert SENTENCE.findall(lines[0]) == [said + join, other]  # the boundary, found
        assert out[0].endswith(other)  # the last sentence kept, the one before drawn
        assert out[3].startswith(out[0][: -len(other)])  # one stand-in in both lines
