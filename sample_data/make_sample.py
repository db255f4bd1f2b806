"""Regenerate the gristmill sample corpus in sample_data/ (deterministic).

Run from the repository root: ``python sample_data/make_sample.py``. Documents are built from
the sentence banks in ``_texts.py`` with ``random.Random(1234)``, so reruns rewrite every data
file byte for byte. Only the standard library is needed, plus ``zstandard`` for the .zst shard
and ``pyarrow`` for the .parquet shard (without them those two files are left untouched).
"""

import gzip
import hashlib
import json
import random
import string
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import _fakes as F
import _texts as T

HERE = Path(__file__).resolve().parent
CJK = ("zh", "ja")
GENERATOR = "toy-gen-1"
# Documents per language and kind.
BASE = {"en": 150, "de": 22, "fr": 22, "es": 22, "ru": 21, "zh": 21, "ja": 21}
PII = {"en": 14, "de": 3, "fr": 3, "es": 3, "ru": 3, "zh": 3, "ja": 3}
LOOKALIKE = {"en": 12, "de": 3, "fr": 3, "es": 3}
EXACT = {"en": 9, "de": 2, "fr": 1, "es": 1, "ru": 1, "zh": 1}  # the first English one twice
NEAR = {"en": 10, "de": 2, "fr": 2, "es": 1, "ru": 1, "zh": 1, "ja": 1}
NEAR_MODES = ["header", "words", "date", "footer", "words"]
BOILER = {"en": 10, "de": 3, "fr": 3, "es": 2}
SYN_COPIES = ["en", "en", "de", "ja"]
SYN_PARENTED = {"en": 18, "de": 2, "fr": 2, "es": 2, "ru": 2, "zh": 2, "ja": 2}
SYN_FREE = {"en": 8, "de": 1, "fr": 1, "es": 1, "ru": 1, "zh": 1, "ja": 1}
MAX_OVERLAP = 0.3  # max word (CJK: character) 5-gram Jaccard between two distinct documents
SHARDS = {
    "part-00000.jsonl": 80,
    "part-00001.jsonl": 70,
    "part-00002.jsonl.gz": 64,
    "part-00003.jsonl.zst": 60,
    "part-00004.parquet": None,  # the rest
}
BROKEN_GOOD = 4
CATEGORIES = ["clean", "pii", "exact_dup", "near_dup", "boilerplate", "short", "code"]
CATEGORIES += ["summary", "qa"]  # synthetic only
MIRRORS = ["news-digest.example.net", "Content-Mirror.example.org", "readlater.example.com"]


@dataclass(eq=False)
class Doc:
    lang: str
    text: str
    cat: str  # clean pii exact_dup near_dup boilerplate short code | synthetic: summary qa
    source: str = "web"
    topic: str = ""
    rel: "Doc | None" = None  # original of a duplicate, or parent of a synthetic document
    note: str = ""  # how a duplicate was made
    url: str = ""
    canon: str = ""  # canonical URL of the page
    slots: dict = field(default_factory=dict)
    idx: list = field(default_factory=list)  # sentences used from the main topic bank
    sh: set = field(default_factory=set)  # 5-gram shingles, for the similarity guard
    pii: list = field(default_factory=list)
    pii_values: list = field(default_factory=list)  # (kind, value) as written in the text
    look: bool = False  # contains PII look-alikes
    id: str = ""
    file: str = ""


rng = random.Random(1234)
CARDS: list[str] = []
IBANS: list[str] = []
SEEN: dict[str, list[set]] = {}  # shingles of the distinct documents made so far, per language
PII_USED = Counter()  # PII templates used so far, per language


def join(lang, sentences):
    return ("" if lang in CJK else " ").join(sentences)


def rand_date(lang):
    y, m, d = rng.randint(2022, 2024), rng.randint(1, 12), rng.randint(1, 28)
    month = T.MONTHS[lang][m - 1] if lang in T.MONTHS else ""
    day = "1er" if (lang, d) == ("fr", 1) else d
    return T.DATE_FORMATS[lang].format(y=y, m=m, d=day, month=month)


def pick_slots(lang):
    slots = {key: rng.choice(values) for key, values in T.SLOTS[lang].items()}
    slots["n"] = rng.randint(5, 20)  # 5..20 keeps Russian number agreement simple
    slots["date"] = rand_date(lang)
    return slots


def slugify(title):
    plain = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    return "-".join("".join(c if c.isalnum() else " " for c in plain).split()[:6]) or "article"


def render(title, paras, heads, lang):
    """Title, then paragraphs; a paragraph with a section heading gets it on the line above."""
    blocks = [(h + "\n" if h else "") + join(lang, p) for h, p in zip(heads, paras, strict=True)]
    return "\n\n".join([title, *blocks])


def too_similar(text, lang, allowed=None):
    """5-gram shingles of ``text`` (characters for CJK, else words) and whether it is too
    close to an earlier distinct document of the same language."""
    grams = "".join(text.split()) if lang in CJK else text.lower().split()
    sh = {" ".join(grams[i : i + 5]) for i in range(len(grams) - 4)}
    seen = SEEN.setdefault(lang, [])
    return sh, any(o is not allowed and len(sh & o) / len(sh | o) > MAX_OVERLAP for o in seen)


# ------------------------------------------------------------------ documents


def insert_sentence(paras, sentence):
    para = rng.choice(paras)
    para.insert(rng.randint(0, len(para)), sentence)


def add_pii(doc, paras):
    """Insert 1-3 PII sentences; templates are taken in turn so every kind shows up."""
    templates = T.PII_TEMPLATES[doc.lang]
    for _ in range(rng.randint(1, 3)):
        template = templates[PII_USED[doc.lang] % len(templates)]
        PII_USED[doc.lang] += 1
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name]
        values = F.pii_values(rng, doc.lang, names)
        CARDS.extend([values["card"]] if "card" in names else [])
        IBANS.extend([values["iban"]] if "iban" in names else [])
        insert_sentence(paras, template.format_map(values))
        for kind in ("phone" if n.startswith("phone") else n for n in names):
            if kind not in doc.pii and kind != "person":
                doc.pii.append(kind)
        doc.pii_values += [(n.split("_")[0], values[n]) for n in names if n != "person"]


def canonical_url(lang, topic, title):
    host, section, www, scheme = T.SITES[lang][topic]
    page = f"{slugify(title)}-{rng.randint(100, 9999)}"
    return f"{scheme}://{'www.' if www else ''}{host}/{section}/{rng.randint(2021, 2024)}/{page}"


def compose(lang, topic):
    """Title plus 1-6 paragraphs of 3-6 sentences; the first one or two are about ``topic``.

    Candidates shorter than 300 characters or too similar to an earlier document of the same
    language are redrawn, so that distinct documents never look like near-duplicates.
    """
    bank, others = T.TOPICS[lang][topic], [t for t in T.TOPICS[lang] if t != topic]
    lo, fewest = (3, 4) if lang in CJK else (1, 3)
    for _ in range(200):
        slots = pick_slots(lang)
        n_par = rng.choice([lo, lo, lo, lo + 1, lo + 1, lo + 2, rng.randint(lo + 2, 6)])
        n_main = min(n_par, rng.randint(1, 2))
        sizes = [rng.randint(4 if n_par == 1 else fewest, 6) for _ in range(n_par)]
        idx = rng.sample(range(len(bank["sentences"])), sum(sizes[:n_main]))
        cuts = [sum(sizes[:i]) for i in range(n_main + 1)]
        paras = [
            [bank["sentences"][i].format_map(slots) for i in idx[a:b]]
            for a, b in zip(cuts, cuts[1:], strict=False)
        ]
        extras = rng.sample(others, n_par - n_main)
        for size, extra in zip(sizes[n_main:], extras, strict=True):
            fresh = {**pick_slots(lang), "town": slots["town"]}  # same town, other people
            sentences = rng.sample(T.TOPICS[lang][extra]["sentences"], size)
            paras.append([s.format_map(fresh) for s in sentences])
        heads = [""] * n_main + [T.SECTIONS[lang][t] for t in extras]
        title = rng.choice(bank["titles"]).format_map(slots)
        text = render(title, paras, heads, lang)
        sh, similar = too_similar(text, lang)
        if len(text) >= 300 and not similar:
            break
    else:
        raise RuntimeError(f"no distinct {lang}/{topic} document in 200 tries")
    SEEN[lang].append(sh)
    return title, paras, heads, slots, idx, sh


def make_base():
    docs = []
    for lang in T.LANGS:
        topics = list(T.TOPICS[lang])
        pii_ix = rng.sample(range(BASE[lang]), PII[lang])
        look_ix = rng.sample(range(BASE[lang]), LOOKALIKE.get(lang, 0))
        for i in range(BASE[lang]):
            topic = topics[i % len(topics)]
            title, paras, heads, slots, idx, sh = compose(lang, topic)
            doc = Doc(lang, "", "pii" if i in pii_ix else "clean", topic=topic, slots=slots)
            doc.idx, doc.sh = idx, sh
            if i in pii_ix:
                add_pii(doc, paras)
            if i in look_ix:
                template = rng.choice(T.LOOKALIKE_TEMPLATES[lang])
                insert_sentence(paras, template.format_map(F.lookalike_values(rng, lang)))
                doc.look = True
            doc.text = render(title, paras, heads, lang)
            doc.canon = canonical_url(lang, topic, title)
            respelled = rng.random() < 0.06
            doc.url = F.url_variant(rng, doc.canon, tracking=True) if respelled else doc.canon
            docs.append(doc)
    return docs


def derive(src, text, cat, note):
    doc = Doc(src.lang, text, cat, topic=src.topic, rel=src, note=note, canon=src.canon)
    doc.pii, doc.look, doc.pii_values = list(src.pii), src.look, list(src.pii_values)
    return doc


def near_text(src, mode):
    lang = src.lang
    if mode == "header":
        return rng.choice(T.NEAR_DUP_HEADERS[lang]).format(date=rand_date(lang)) + "\n" + src.text
    if mode == "footer":
        return src.text + "\n\n" + rng.choice(T.NEAR_DUP_FOOTERS[lang])
    if mode == "date":
        new = src.slots["date"]
        while new == src.slots["date"]:
            new = rand_date(lang)
        return src.text.replace(src.slots["date"], new)
    title, body = src.text.split("\n\n", 1)  # "words": replace two words with others
    tokens = body.split(" ")
    cands = [i for i, t in enumerate(tokens) if t.isalpha() and len(t) >= 4]
    for i in rng.sample(cands, 2):
        tokens[i] = rng.choice([tokens[j] for j in cands if tokens[j] != tokens[i]])
    return title + "\n\n" + " ".join(tokens)


def make_derived(base):
    """Exact duplicates (same, re-spelled or mirror URL) and near-duplicates of base docs."""
    derived, taken, n_near = [], set(), 0
    for lang in T.LANGS:
        pool = [d for d in base if d.lang == lang]
        for i in range(EXACT.get(lang, 0)):
            src = rng.choice([d for d in pool if id(d) not in taken])
            taken.add(id(src))
            mode = ["variant", "same", "mirror"][i % 3]
            for _ in range(2 if (lang == "en" and i == 0) else 1):
                dup = derive(src, src.text, "exact_dup", mode)
                if mode == "same":
                    dup.url = src.url
                elif mode == "variant":
                    dup.url = F.url_variant(rng, src.canon, tracking=True)
                else:
                    digest = hashlib.sha1(src.text.encode()).hexdigest()[:10]
                    dup.url = dup.canon = f"https://{rng.choice(MIRRORS)}/story/{digest}"
                derived.append(dup)
        for i in range(NEAR.get(lang, 0)):
            n_near += 1
            mode = NEAR_MODES[n_near % len(NEAR_MODES)]
            cands = [d for d in pool if id(d) not in taken]
            fits = {
                "date": [d for d in cands if d.slots["date"] in d.text],
                "words": [d for d in cands if len(d.text.split()) >= 150],  # never CJK
            }
            if not fits.get(mode, cands):
                mode = "footer"
            src = rng.choice(fits.get(mode, cands))
            taken.add(id(src))
            near = derive(src, near_text(src, mode), "near_dup", mode)
            near.url = rng.choice([src.canon, F.url_variant(rng, src.canon, tracking=i % 2 == 0)])
            derived.append(near)
    return derived


def make_boilerplate():
    """Pages that are mostly navigation, cookie banner and footer around a short body."""
    docs = []
    for lang, count in BOILER.items():
        parts = T.BOILERPLATE[lang]
        for _ in range(count):
            site = rng.choice(T.BOILERPLATE_SITES[lang])
            bank = T.TOPICS[lang][rng.choice(list(T.TOPICS[lang]))]
            slots, nav = pick_slots(lang), rng.choice(parts["nav"])
            body = [s.format_map(slots) for s in rng.sample(bank["sentences"], rng.randint(1, 2))]
            related = [t.format_map(pick_slots(lang)) for t in rng.sample(bank["titles"], 3)]
            top = rng.sample(parts["top"], rng.randint(1, len(parts["top"])))
            lines = [*top, site, nav, rng.choice(parts["cookie"]), nav]
            lines += [rng.choice(bank["titles"]).format_map(slots), join(lang, body)]
            lines += [rng.choice(parts["share"]), rng.choice(parts["related"]), *related]
            lines += [nav] * rng.randint(1, 2)
            footer = rng.sample(parts["footer"], rng.randint(2, len(parts["footer"])))
            doc = Doc(lang, "\n".join(lines + [f.format(site=site) for f in footer]), "boilerplate")
            page = rng.choice(["", "news/", "about/", "blog/"])
            doc.url = doc.canon = f"https://www.{slugify(site)}.example.com/{page}"
            docs.append(doc)
    return docs


def make_misc():
    docs = []
    for lang, text in T.SHORT_DOCS:
        doc = Doc(lang, text, "short")
        doc.url = doc.canon = f"https://www.{rng.choice(MIRRORS).lower()}/p/{rng.randint(1, 999)}"
        docs.append(doc)
    for text in T.CODE_DOCS:
        doc = Doc("en", text, "code", topic="software")
        doc.url = doc.canon = canonical_url("en", "software", text.split("\n")[0])
        docs.append(doc)
    return docs


def synth_text(lang, topic, slots, parent, k):
    """A model-style summary or Q&A: some of the parent's sentences plus unused ones."""
    syn, sep = T.SYNTH[lang], "" if lang in CJK else " "
    sentences = T.TOPICS[lang][topic]["sentences"]
    if parent:
        others = [i for i in range(len(sentences)) if i not in parent.idx]
        picked = rng.sample(parent.idx, min(len(parent.idx), 5) if lang in CJK else 2)
        extra = rng.randint(4, 6) if lang in CJK else rng.randint(2, 4)
        picked += rng.sample(others, min(len(others), extra))
    else:
        picked = rng.sample(range(len(sentences)), rng.randint(4, 7) + 3 * (lang in CJK))
    rng.shuffle(picked)
    said = [sentences[i].format_map(slots) for i in picked]
    closing = rng.choice(syn["closings"])
    if parent and k % 2 == 0:
        body = "\n".join("- " + s for s in said) if rng.random() < 0.5 else join(lang, said)
        return "summary", f"{rng.choice(syn['intros'])}\n\n{body}\n\n{closing}"
    question = rng.choice(syn["questions"]).format(topic=syn["topics"][topic])
    q_label, a_label = syn["labels"]
    answer = join(lang, [*said, closing])
    return "qa", f"{q_label}{sep}{question}\n\n{a_label}{sep}{answer}"


def make_synthetic(base, derived):
    """Copies of web texts, plus summaries and Q&A built from a parent's topic bank."""
    busy = {id(d.rel) for d in derived}
    docs = []
    for lang in SYN_COPIES:
        parent = rng.choice([d for d in base if d.lang == lang and id(d) not in busy])
        busy.add(id(parent))
        docs.append(Doc(lang, parent.text, "exact_dup", "synthetic", parent.topic, rel=parent))
    for lang in T.LANGS:
        pool = [d for d in base if d.lang == lang and not d.pii]
        parents = rng.sample(pool, SYN_PARENTED[lang]) + [None] * SYN_FREE[lang]
        for k, parent in enumerate(parents):
            topic = parent.topic if parent else rng.choice(list(T.TOPICS[lang]))
            slots = parent.slots if parent else pick_slots(lang)
            for _ in range(100):  # redraw while too close to anything but the parent
                cat, text = synth_text(lang, topic, slots, parent, k)
                sh, similar = too_similar(text, lang, parent.sh if parent else None)
                if not similar:
                    break
            else:
                raise RuntimeError(f"no distinct synthetic {lang} document in 100 tries")
            SEEN[lang].append(sh)
            docs.append(Doc(lang, text, cat, "synthetic", topic, rel=parent))
    rng.shuffle(docs)
    return docs


# ------------------------------------------------------------------ ordering and output


def order_web(docs):
    """Shuffle, then swap until every duplicate comes after the document it copies."""
    rng.shuffle(docs)
    while True:
        pos = {id(d): i for i, d in enumerate(docs)}
        late = [(i, pos[id(d.rel)]) for i, d in enumerate(docs) if d.rel and pos[id(d.rel)] > i]
        if not late:
            return docs
        i, j = late[0]
        docs[i], docs[j] = docs[j], docs[i]


def write_shard(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    try:
        if path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            columns = {key: [r[key] for r in records] for key in records[0]}
            pq.write_table(pa.table(columns), path, compression="zstd")
            return
        if path.suffix == ".zst":
            import zstandard

            data = zstandard.ZstdCompressor(level=3).compress(data)
    except ImportError as exc:
        print(f"WARNING: {exc.name} is not installed; {path.name} left unchanged")
        return
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=9, mtime=0)
    path.write_bytes(data)


def web_record(d):
    return {"id": d.id, "url": d.url, "text": d.text}


def syn_record(d):
    parent = d.rel.id if d.rel else None
    digest = hashlib.sha256(f"{GENERATOR}|{d.cat}|{d.lang}|{parent}|{d.id}".encode()).hexdigest()
    return dict(
        id=d.id, text=d.text, generator=GENERATOR, prompt_hash=digest[:16], parent_id=parent
    )


def main():
    base = make_base()
    derived = make_derived(base)
    synthetic = make_synthetic(base, derived)
    busy = {id(d.rel) for d in derived + synthetic} | {id(d) for d in derived}
    spare = [d for d in base if id(d) not in busy and not d.pii]
    broken_good = [spare[i] for i in sorted(rng.sample(range(len(spare)), BROKEN_GOOD))]
    web = base + derived + make_boilerplate() + make_misc()
    web = order_web([d for d in web if all(d is not g for g in broken_good)])

    number, records, lines, malformed = 0, {}, [], []
    for name, size in SHARDS.items():  # ids follow file order
        chunk, web = (web[:size], web[size:]) if size else (web, [])
        for d in chunk:
            number += 1
            d.id, d.file = f"web-{number:04d}", f"web/{name}"
        records[name] = chunk
    for i, d in enumerate(broken_good):  # good lines, each but the second followed by a bad one
        number += 1
        d.id, d.file = f"web-{number:04d}", "web/part-broken.jsonl"
        lines.append(json.dumps(web_record(d), ensure_ascii=False))
        if i != 1 and len(malformed) < 3:
            number += 1
            bad = {"id": f"web-{number:04d}", "url": T.BROKEN_URL.format(n=number)}
            why, line = T.MALFORMED[len(malformed)]
            lines.append(line.format(**bad))
            malformed.append((bad["id"], why))
    for k, d in enumerate(synthetic, 1):
        d.id, d.file = f"syn-{k:04d}", "synthetic/part-00000.jsonl"

    docs = [d for chunk in records.values() for d in chunk] + broken_good + synthetic
    texts = Counter(d.text for d in docs if d.cat != "exact_dup")
    assert max(texts.values()) == 1, "two intended-distinct documents are identical"
    assert all(d.text == d.rel.text for d in docs if d.cat == "exact_dup")
    assert all(map(F.luhn_ok, CARDS)) and all(map(F.iban_ok, IBANS))

    for name, chunk in records.items():
        write_shard(HERE / "web" / name, [web_record(d) for d in chunk])
    (HERE / "web" / "part-broken.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    write_shard(HERE / "synthetic" / "part-00000.jsonl", [syn_record(d) for d in synthetic])
    write_labels(docs, malformed)
    print_summary(docs, malformed)


def write_labels(docs, malformed):
    """Ground truth for tests: one row per document or malformed line."""
    rows = ["id\tsource\tfile\tlang\tcategory\trelated_id\thow\tpii\tlookalike"]
    for d in docs:
        cols = [d.id, d.source, d.file, d.lang, d.cat, d.rel.id if d.rel else "", d.note]
        rows.append("\t".join([*cols, ",".join(d.pii), str(int(d.look))]))
    rows += [f"{i}\tweb\tweb/part-broken.jsonl\t\tmalformed\t\t{why}\t\t0" for i, why in malformed]
    (HERE / "labels.tsv").write_text("\n".join(rows) + "\n", "utf-8")
    # every fake PII value, as written in its document (copies carry their original's values)
    rows = ["id\tkind\tvalue"]
    rows += [f"{d.id}\t{kind}\t{value}" for d in docs for kind, value in d.pii_values]
    (HERE / "pii_values.tsv").write_text("\n".join(rows) + "\n", "utf-8")


def print_summary(docs, malformed):
    cats, count = CATEGORIES, Counter((d.source, d.lang, d.cat) for d in docs)
    print("| source | lang | " + " | ".join(cats) + " | total |")
    print("|---" * (len(cats) + 3) + "|")
    for source in ("web", "synthetic"):
        for lang in T.LANGS:
            row = [count[source, lang, c] for c in cats]
            print(f"| {source} | {lang} | " + " | ".join(map(str, row)) + f" | {sum(row)} |")
    totals = [sum(n for (_, _, c), n in count.items() if c == cat) for cat in cats]
    print("| all | | " + " | ".join(map(str, totals)) + f" | {len(docs)} |\n")

    web = [d for d in docs if d.source == "web"]
    langs, files = Counter(d.lang for d in docs), Counter(d.file for d in docs)
    near = Counter(d.note for d in docs if d.cat == "near_dup")
    crossed = sum(d.file != d.rel.file for d in web if d.cat in ("exact_dup", "near_dup"))
    pii = Counter(k for d in docs for k in d.pii)
    spellings: dict[str, set] = {}
    for d in web:
        spellings.setdefault(F.normalise_url(d.url), set()).add(d.url)
    tracked = sum(any(key in d.url for key in F.TRACKING) for d in web)
    sizes = sorted(len(d.text) for d in docs if d.cat != "short")
    per_lang = ", ".join(f"{k} {langs[k]}" for k in T.LANGS)
    print(f"- documents per language: {per_lang} (English {langs['en'] / len(docs):.1%})")
    print("- documents per file: " + ", ".join(f"{f} {n}" for f, n in files.items()))
    print(f"- malformed lines in web/part-broken.jsonl: {len(malformed)}")
    print(f"- web duplicates/near-duplicates in another file than their original: {crossed}")
    print(f"- near-duplicate edits: {dict(near)}")
    print(f"- documents with PII: {sum(bool(d.pii) for d in docs)}, by kind: {dict(pii)}")
    print(f"- card numbers: {len(CARDS)} (all pass Luhn); IBANs: {len(IBANS)} (all pass mod-97)")
    print(f"- documents with PII look-alikes (not PII): {sum(d.look for d in docs)}")
    respelled = sum(len(s) > 1 for s in spellings.values())
    print(f"- web URLs with tracking parameters: {tracked}; URLs with 2+ spellings: {respelled}")
    print(f"- characters per text, short docs aside: min {sizes[0]}, max {sizes[-1]}")


if __name__ == "__main__":
    main()
