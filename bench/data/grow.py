"""A corpus of any size from the development corpus that every stage accepts, for the scale
bench (`bench/speed/scale_chain.py`): new documents in the languages and sources of the
corpus, with a planted duplicate structure whose counts are recorded.

A new document copies the shape of a page drawn from the corpus (its `source`, `lang`, URL
and line count): each of its lines is a line of the same shape (length class, whether it
starts with a list mark or digit, whether it ends with a sentence mark) drawn from the pages
of the same source and language, and a line of two or more sentences has its sentences
before the last replaced by sentences of similar length from that source and language. So
langid, quality and safety see the words, lines and punctuation of the originals, and two
new documents share no more than lines and sentences. On top of them (shares of the new
documents, drawn per document):

- exact copies (`exact`, default 0.03): the same text under a new id and URL;
- near copies (`near`, default 0.05): words replaced at positions 5 or more apart so that
  the word 5-gram Jaccard with the original is a target (0.95, 0.9, 0.85, 0.8, 0.7;
  `synthetic_corpus.near_copy`), the exact value recorded;
- template families (`families` per 20,000 new documents, default 10): a 300-word text with
  3% of its words replaced in each member, of 10, 30, 50 or 150 members;
- URL duplicates (`url_dups`, default 0.02): a new document under the URL of an earlier one.

Documents: `id` (`g<seed>-<n>`), `text`, `url` (unique: the page's host, then `/g<seed>/<n>`
and its path), `lang`, `package` (the corpus' `source`), `kind` and, for planted ones, `of`.
Files: `<out>/shards/part-<k>.jsonl.zst` of `docs_per_shard` documents each (one per task of
a scale run), `<out>/planted.json` (the counts, parameters and bytes of text), `<out>/DONE`.
Shard k is drawn from its own `Random` (seeded by seed and k), so shards can be written in
parallel (`--jobs`) and only one shard's documents are in memory at a time; the corpus it
draws from is held whole (lines and sentences of 87 MB of text). `--original` writes the
corpus itself in the same fields, the baseline the keep rates are compared with. `--mix` is
the share of a page's lines replaced by lines of other pages (more: fewer lines shared with
the page it copies; less: page-level signals, which quality reads, nearer the originals').

    python -m bench.data.grow --factor 10 --seed 1 -o OUT [--data DIR] [--docs-per-shard N]
    python -m bench.data.grow --factor 30 --shards 40 --seed 1 -o OUT  # 30x's first 40 shards
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

from bench.data.corpus import corpus_path
from bench.data.synthetic_corpus import FAMILIES, NEAR_JACCARD, jaccard, near_copy, replaced
from gristmill.stages.formats.docio import AtomicWriter, read_records
from gristmill.stages.text.scripts import TERMINAL_PUNCTUATION

BASE_DOCS = 20_000  # families are planted per this many new documents
TEMPLATE_WORDS = 300
# a sentence ends at . ! ? before a space or the end, or at any other sentence end of the
# listed scripts (`stages/text/scripts.py`: CJK full stops, danda, Arabic question mark, ...)
ENDS_ALONE = "".join(c for c in TERMINAL_PUNCTUATION if not c.isascii())
SENTENCE = re.compile(rf".+?(?:[.!?]+(?=\s|$)|[{re.escape(ENDS_ALONE)}]+|$)\s*", re.S)
LENGTHS = (20, 60, 200, 600)


def length_class(n: int) -> int:
    return sum(n >= x for x in LENGTHS)


def shape(line: str) -> tuple:
    """What a line's stand-in keeps: length class, list mark or digit first, sentence end."""
    s = line.strip()
    ends = bool(s) and s[-1] in TERMINAL_PUNCTUATION + ":"
    return (length_class(len(s)), s[:1] in "-*•·0123456789", ends, s.isascii())


class Group:
    """The pages, lines by shape and sentences by length class of one (source, lang)."""

    def __init__(self):
        self.pages: list[dict] = []
        self.lines: dict[tuple, list[str]] = defaultdict(list)
        self.sentences: dict[tuple, list[str]] = defaultdict(list)

    def add(self, rec: dict) -> None:
        lines = rec["text"].split("\n")
        self.pages.append({"url": rec.get("url") or "", "lines": lines, "shapes": []})
        for line in lines:
            key = shape(line)
            self.pages[-1]["shapes"].append(key)
            self.lines[key].append(line)
            for s in SENTENCE.findall(line):
                self.sentences[length_class(len(s)), s.isascii()].append(s)

    def line(self, own: str, key: tuple, rng: random.Random, mix: float, memo: dict) -> str:
        """The stand-in for line `own` of a page; `memo` holds the page's stand-ins so far,
        so that a line or sentence the page repeats is replaced by the same one each time
        (the repetition quality measures is kept)."""
        if ("line", own) in memo:
            return memo["line", own]
        line = rng.choice(self.lines[key]) if rng.random() < mix else own
        parts = SENTENCE.findall(line)
        if len(parts) < 2:
            memo["line", own] = line
            return line
        out = [self._sentence(s, rng, memo) for s in parts[:-1]]
        for i, s in enumerate(out[:-1]):  # sentences drawn without their spacing get one
            if not s[-1:].isspace() and not s.endswith(("。", "！", "？")):
                out[i] = s + " "
        if out and not out[-1][-1:].isspace() and not out[-1].endswith(("。", "！", "？")):
            out[-1] += " "
        memo["line", own] = "".join(out) + parts[-1]
        return memo["line", own]

    def _sentence(self, own: str, rng: random.Random, memo: dict) -> str:
        if ("sentence", own) not in memo:
            pool = self.sentences[length_class(len(own)), own.isascii()]
            memo["sentence", own] = rng.choice(pool)
        return memo["sentence", own]


def load_groups(path: Path) -> tuple[dict[tuple, Group], list[tuple]]:
    groups: dict[tuple, Group] = defaultdict(Group)
    order = []  # one key per page: a new document's group is drawn like a page
    for rec in read_records(path):
        text = rec.get("text")
        if isinstance(text, str) and text.strip():
            key = (rec.get("source") or "", rec.get("lang") or "")
            groups[key].add(rec)
            order.append(key)
    return dict(groups), order


def new_url(url: str, seed: int, n: int) -> str:
    parts = urlsplit(url)
    host = parts.netloc or "example.org"
    return f"{parts.scheme or 'https'}://{host}/g{seed}/{n}{parts.path or '/'}"


class Shard:
    """The documents of one shard, planted ones included, in a fixed order."""

    def __init__(self, groups, order, seed: int, k: int, n_docs: int, opts):
        self.groups, self.order, self.seed, self.k, self.opts = groups, order, seed, k, opts
        self.rng = random.Random(f"{seed}-{k}")
        self.n_docs, self.made = n_docs, 0
        self.counts = defaultdict(int)
        self.near_targets: dict[str, int] = defaultdict(int)
        self.urls: list[str] = []

    def next_id(self) -> tuple[str, int]:
        n = self.k * 10**7 + self.made
        self.made += 1
        return f"g{self.seed}-{n:012d}", n

    def page(self) -> dict:
        key = self.rng.choice(self.order)
        group = self.groups[key]
        page = self.rng.choice(group.pages)
        mix = self.opts.mix
        lines = zip(page["lines"], page["shapes"], strict=True)
        memo: dict = {}
        text = "\n".join(group.line(own, s, self.rng, mix, memo) for own, s in lines)
        doc_id, n = self.next_id()
        url = new_url(page["url"], self.seed, n)
        return {"id": doc_id, "text": text, "url": url, "lang": key[1], "package": key[0]}

    def __iter__(self):
        opts, rng = self.opts, self.rng
        families = [FAMILIES[(self.k + i) % len(FAMILIES)] for i in range(self._families())]
        at = sorted(rng.randrange(max(self.n_docs, 1)) for _ in families)
        while self.made < self.n_docs:
            doc = self.page() | {"kind": "new"}
            while at and self.made >= at[0]:
                at.pop(0)
                yield from self.family(doc, families.pop(0))
            u = rng.random()
            if u < opts.url_dups and self.urls:
                doc |= {"url": rng.choice(self.urls), "kind": "url_dup"}
            self.counts[doc["kind"]] += 1
            self.urls.append(doc["url"])
            yield doc
            yield from self.planted(doc, rng.random())

    def _families(self) -> int:
        want = self.opts.families * self.n_docs / BASE_DOCS
        return int(want) + (self.rng.random() < want - int(want))

    def planted(self, doc: dict, u: float):
        opts, rng = self.opts, self.rng
        if u < opts.exact:
            doc_id, n = self.next_id()
            self.counts["exact"] += 1
            yield doc | {"id": doc_id, "url": new_url(doc["url"], self.seed, n), "kind": "exact",
                         "of": doc["id"]}  # fmt: skip
        elif u < opts.exact + opts.near:
            target = NEAR_JACCARD[self.made % len(NEAR_JACCARD)]
            copy = near_copy(doc["text"], target, rng)
            if copy is None:
                return
            doc_id, n = self.next_id()
            self.counts["near"] += 1
            self.near_targets[str(target)] += 1
            yield doc | {"id": doc_id, "url": new_url(doc["url"], self.seed, n), "text": copy,
                         "kind": "near", "of": doc["id"], "target": target,
                         "jaccard": round(jaccard(doc["text"], copy), 4)}  # fmt: skip

    def family(self, seed_doc: dict, size: int):
        """A template family seeded by a long new document (skipped if none comes soon)."""
        words = seed_doc["text"].split(" ")
        for _ in range(50):
            if len(words) >= TEMPLATE_WORDS:
                break
            seed_doc = self.page()
            words = seed_doc["text"].split(" ")
        else:
            return
        words = words[:TEMPLATE_WORDS]
        self.counts["families"] += 1
        for _ in range(size):
            doc_id, n = self.next_id()
            text = " ".join(replaced(words, TEMPLATE_WORDS * 3 // 100, self.rng, words))
            self.counts["template"] += 1
            yield seed_doc | {"id": doc_id, "url": new_url(seed_doc["url"], self.seed, n),
                              "text": text, "kind": "template", "of": seed_doc["id"]}  # fmt: skip


def write_shard(path: Path, docs) -> tuple[int, int]:
    """Write `docs` to `path` whole (temp then rename); how many, and the UTF-8 bytes of
    their text."""
    writer, n = AtomicWriter(path), 0
    try:
        for doc in docs:
            n += len(doc["text"].encode())
            writer.write_record(doc)
    except BaseException:
        writer.abort()
        raise
    writer.close()
    return writer.count, n


_STATE: dict = {}  # the loaded corpus, shared with forked workers


def make_shard(k: int) -> dict:
    """Write shard k unless it is there; its figures (kept beside the shards)."""
    out, opts = _STATE["out"], _STATE["opts"]
    done = out / "counts" / f"part-{k:05d}.json"
    if done.exists():
        return json.loads(done.read_text())
    n_docs, path = _STATE["sizes"][k], out / "shards" / f"part-{k:05d}.jsonl.zst"
    if opts.original:
        start = sum(_STATE["sizes"][:k])
        recs = _STATE["records"][start : start + n_docs]
        docs, n = write_shard(path, recs)
        got = {"bytes": n, "docs": docs, "counts": {"orig": docs}}
    else:
        shard = Shard(_STATE["groups"], _STATE["order"], opts.seed, k, n_docs, opts)
        docs, n = write_shard(path, shard)
        got = {"bytes": n, "docs": docs}
        got |= {"counts": dict(shard.counts), "near_targets": dict(shard.near_targets)}
    done.parent.mkdir(parents=True, exist_ok=True)
    done.write_text(json.dumps(got))
    return got


def shard_sizes(total: int, per: int) -> list[int]:
    n = max(1, round(total / per))
    return [total // n + (i < total % n) for i in range(n)]


def summary(figures: list[dict], opts, n_corpus: int) -> dict:
    counts, targets = defaultdict(int), defaultdict(int)
    for f in figures:
        for k, v in f["counts"].items():
            counts[k] += v
        for k, v in f.get("near_targets", {}).items():
            targets[k] += v
    params = {k: getattr(opts, k) for k in ("factor", "seed", "exact", "near", "families")}
    params |= {"url_dups": opts.url_dups, "mix": opts.mix, "docs_per_shard": opts.docs_per_shard}
    params |= {"shards": opts.shards}
    return {
        "params": params | {"original": opts.original, "corpus_docs": n_corpus},
        "docs": sum(f["docs"] for f in figures),
        "bytes": sum(f["bytes"] for f in figures),
        "shards": len(figures),
        "planted": dict(counts) | {"near_by_target": dict(sorted(targets.items()))},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("--factor", type=float, default=1.0, help="documents, x the corpus'")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, help="the data folder or the corpus file")
    ap.add_argument("--docs-per-shard", type=int, default=10_000)
    ap.add_argument("--exact", type=float, default=0.03, help="share given an exact copy")
    ap.add_argument("--near", type=float, default=0.05, help="share given a near copy")
    ap.add_argument("--families", type=float, default=10, help="per 20,000 documents")
    ap.add_argument("--url-dups", type=float, default=0.02, help="share under an earlier URL")
    ap.add_argument("--mix", type=float, default=0.15, help="share of lines drawn from others")
    ap.add_argument("--original", action="store_true", help="the corpus itself, same fields")
    ap.add_argument("--shards", type=int, help="only the first N shards of the factor's corpus")
    ap.add_argument("--jobs", type=int, default=1)
    opts = ap.parse_args(argv)
    path = corpus_path(opts.data)
    if path is None:
        print("grow: no development corpus (pass --data)", file=sys.stderr)
        return 1
    if opts.original:
        recs = [
            {
                "id": r["id"],
                "text": r["text"],
                "url": r.get("url"),
                "lang": r.get("lang"),
                "package": r.get("source"),
                "kind": "orig",
            }  # fmt: skip
            for r in read_records(path)
            if isinstance(r.get("text"), str) and r["text"].strip()
        ]
        n_corpus, total = len(recs), len(recs)
        _STATE["records"] = recs
    else:
        _STATE["groups"], _STATE["order"] = load_groups(path)
        n_corpus = len(_STATE["order"])
        total = round(opts.factor * n_corpus)
    _STATE.update(out=opts.out, opts=opts, sizes=shard_sizes(total, opts.docs_per_shard))
    ks = range(min(opts.shards or len(_STATE["sizes"]), len(_STATE["sizes"])))
    if opts.jobs > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(opts.jobs) as pool:
            figures = pool.map(make_shard, ks, chunksize=1)
    else:
        figures = [make_shard(k) for k in ks]
    got = summary(figures, opts, n_corpus)
    (opts.out / "planted.json").write_text(json.dumps(got, indent=1) + "\n")
    (opts.out / "DONE").write_text("")
    print(json.dumps({k: got[k] for k in ("docs", "bytes", "shards", "planted")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
