"""The labelled near-duplicate set of bench/evals/neardup.py: labels by construction, not by
Jaccard.

Every document is a corpus document or made from one with recorded edits, and its label is what
was done to it, so no label depends on how the stage (or anyone) shingles text:

- bases: distinct documents of the corpus (150 to 3,000 words; any two share under 30% of
  their word 5-grams, so the corpus' own translations and versions are not in one set twice);
- a family is a base and 1 to 3 edited copies, each of one edit level drawn by construction:
  `copy` (paragraphs reordered, nothing else), `light` (0.2-2% of the units inserted, deleted
  or substituted; maybe a header and/or footer of 1% of the units each from another document;
  maybe the last 0-3% cut off) and `medium` (3-8% of the units edited, or cut to 60-85%, or a
  header of 15-30% of the units). A unit is a word, or a character in a text mostly of
  scripts written without spaces (Chinese, Japanese, Thai...), so an edit is as small in
  every language. The base with its `copy` and `light` copies are near
  duplicates (positives); pairs with a `medium` copy are the ambiguous band, scored apart;
- hard negatives, each a family of its own: (1) `shared_paragraph`: another document with the
  longest paragraph (60+ words) of a base put in its middle; (2) `template`: 3 different
  documents wrapped in one header and footer taken from a fourth, long enough to make them look
  alike (the template's share aimed at 30-70% of each document's units);
- every document of another family is a negative of every other.

The reference word 5-gram Jaccard (regex words of the NFKC-lower-cased text, Python sets;
written apart from the stage) is computed only to describe the set (which J each edit level
gave), never to label it.
"""

from __future__ import annotations

import unicodedata
from itertools import combinations

import numpy as np

NO_SPACE = ((0x0E00, 0x0FFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x3040, 0x30FF),
            (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))  # fmt: skip
POSITIVE_LEVELS = ("base", "copy", "light")
LEVEL_WEIGHTS = {"copy": 0.2, "light": 0.5, "medium": 0.3}


def _is_letter(ch: str) -> bool:
    return ch == "_" or ord(ch) > 0xFFFF or unicodedata.category(ch)[0] in "LMN"


def shingles(text: str, n: int = 5) -> set:
    r"""Word n-grams of the NFKC-normalised lower-cased text (words: runs of letters, marks,
    digits and '_'; Python's `\w` would cut Indic words at their vowel signs), or letter
    n-grams when over 30% of the letters are of scripts written without spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    words, cur = [], []
    for ch in text:
        if _is_letter(ch):
            cur.append(ch)
        elif cur:
            words.append("".join(cur))
            cur = []
    if cur:
        words.append("".join(cur))
    letters = "".join(words)
    no_space = sum(any(lo <= ord(c) <= hi for lo, hi in NO_SPACE) for c in letters)
    units = list(letters) if no_space > 0.3 * len(letters) else words
    return {tuple(units[i : i + n]) for i in range(max(1, len(units) - n + 1))}


def no_space(text: str) -> bool:
    """Mostly a script written without spaces: its unit of text is the character, not the
    space-separated word (edits, boilerplate and lengths below count in these units)."""
    letters = [c for c in text if c.isalpha()]
    return sum(any(lo <= ord(c) <= hi for lo, hi in NO_SPACE) for c in letters) > 0.3 * max(
        1, len(letters)
    )


def units(text: str) -> list[str]:
    return list(text) if no_space(text) else text.split()


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


# ---- edits: each returns the new text and appends what it did to `log` ----


def edit_words(text: str, rate: float, rng, log: list) -> str:
    """Insert, delete or substitute each unit (word; character in scripts without spaces)
    with probability `rate`; new units are made-up words, or characters of the text itself."""
    ns = no_space(text)
    own = [c for c in text if c.isalpha()] or ["x"]
    lines = [list(line) if ns else line.split(" ") for line in text.split("\n")]
    counts = {"insert": 0, "delete": 0, "substitute": 0}
    for words in lines:
        for i in reversed(range(len(words))):
            if rng.random() < rate:
                op = ("insert", "delete", "substitute")[rng.randint(3)]
                counts[op] += 1
                new = own[rng.randint(len(own))] if ns else f"{op[:3]}{rng.randint(10**6)}"
                if op == "insert":
                    words.insert(i, new)
                elif op == "delete":
                    del words[i]
                else:
                    words[i] = new
    log.append({"op": "words", "rate": round(rate, 4), "unit": "char" if ns else "word", **counts})
    return "\n".join(("" if ns else " ").join(w) for w in lines)


def take(donor: str, start: int, n: int) -> str:
    """n units of `donor` from unit `start`, joined as the donor writes them."""
    return ("" if no_space(donor) else " ").join(units(donor)[start : start + n])


def add_boilerplate(text: str, donor: str, where: str, n: int, rng, log: list) -> str:
    extra = take(donor, rng.randint(max(1, len(units(donor)) - n)), n)
    log.append({"op": where, "units": n})
    return f"{extra}\n{text}" if where == "header" else f"{text}\n{extra}"


def reorder(text: str, rng, log: list) -> str:
    lines = text.split("\n")
    k = min(len(lines), rng.randint(2, 6))
    if k < 2:
        return text
    idx = sorted(rng.choice(len(lines), k, replace=False).tolist())
    moved = [lines[i] for i in idx]
    rng.shuffle(moved)
    for i, line in zip(idx, moved, strict=True):
        lines[i] = line
    log.append({"op": "reorder", "paragraphs": k})
    return "\n".join(lines)


def truncate(text: str, keep: float, log: list) -> str:
    log.append({"op": "truncate", "keep": round(keep, 3)})
    return text[: int(len(text) * keep)]


def variant(text: str, donor: str, level: str, rng) -> tuple[str, list]:
    """An edited copy of `text` at one edit level (see the module docstring)."""
    log: list = []
    n = len(units(text))
    if level == "copy":
        return reorder(text, rng, log), log
    if level == "light":
        text = edit_words(text, rng.uniform(0.002, 0.02), rng, log)
        for where in ("header", "footer"):
            if rng.random() < 0.3:
                text = add_boilerplate(text, donor, where, max(1, int(0.01 * n)), rng, log)
        if rng.random() < 0.3:
            text = reorder(text, rng, log)
        if rng.random() < 0.25:
            text = truncate(text, rng.uniform(0.97, 1.0), log)
        return text, log
    kind = rng.randint(3)  # medium: one larger edit
    if kind == 0:
        text = edit_words(text, rng.uniform(0.03, 0.08), rng, log)
    elif kind == 1:
        text = truncate(text, rng.uniform(0.6, 0.85), log)
    else:
        text = add_boilerplate(text, donor, "header", int(rng.uniform(0.15, 0.3) * n), rng, log)
    return text, log


def longest_line(text: str) -> str:
    return max(text.split("\n"), key=lambda s: len(units(s)))


def shared_paragraphs(bases, hosts, rng, n: int) -> list[tuple[int, int, str]]:
    """n (base, host, text): the host with the base's longest line (60+ words, the largest
    shares first) in its middle; the host chosen by length so the two look alike (the shared
    paragraph aimed at 20-50% of the pair's units)."""
    shares = []
    for b, (_, text) in enumerate(bases):
        lw, bw = len(units(longest_line(text))), len(units(text))
        if lw >= 60:
            shares.append((-lw / bw, b))
    shares.sort()
    host_words = np.array([len(units(t)) for _, t in hosts])
    out, used = [], set()
    for _, b in shares[:n]:
        line = longest_line(bases[b][1])
        lw, bw = len(units(line)), len(units(bases[b][1]))
        want = lw / rng.uniform(0.2, 0.5) - bw
        h = next(
            (int(i) for i in np.argsort(np.abs(host_words - want)) if int(i) not in used), None
        )
        if h is None:
            break
        used.add(h)
        lines = hosts[h][1].split("\n")
        mid = len(lines) // 2
        out.append((b, h, "\n".join([*lines[:mid], line, *lines[mid:]])))
    return out


def templates(hosts, used: set, rng, n: int) -> list[list[str]]:
    """n groups of 3 texts: different documents in one header + footer (a fourth document's
    words), sized so the template is 30-70% of each document's units."""
    free = [i for i in range(len(hosts)) if i not in used]
    rng.shuffle(free)
    groups = []
    while len(groups) < n and len(free) >= 4:
        donor, bodies = hosts[free.pop()][1], [hosts[free.pop()][1] for _ in range(3)]
        body = np.mean([len(units(t)) for t in bodies])
        share = rng.uniform(0.3, 0.7)
        t = min(len(units(donor)), int(share * body / (1 - share)))
        head, foot = take(donor, 0, t // 2), take(donor, t // 2, t - t // 2)
        groups.append([f"{head}\n{text}\n{foot}" for text in bodies])
    return groups


def choose(texts, n: int, rng) -> list[tuple[str, str]]:
    pool = [t for t in texts if 150 <= len(units(t[1])) <= 3000]
    chosen, sets = [], []
    for i in rng.permutation(len(pool)):
        sh = shingles(pool[i][1])
        if any(jaccard(sh, s) > 0.3 or len(sh & s) > 0.3 * len(sh) for s in sets):
            continue  # a translation or version of one already chosen
        chosen.append(pool[i])
        sets.append(sh)
        if len(chosen) >= n:
            break
    return chosen


def build(texts: list[tuple[str, str]], n_bases: int, seed: int):
    """(documents, pairs): documents {id, text, family, level, edits}; pairs (a, b, kind) for
    every pair within a family and every hard-negative pair, kind one of `positive`, `medium`,
    `shared_paragraph`, `template`."""
    rng = np.random.RandomState(seed)
    chosen = choose(texts, 2 * n_bases, rng)
    bases, hosts = chosen[:n_bases], chosen[n_bases:]
    # random ids: the survivor rule ends with the smallest id, which must not favour the bases
    ids = iter(f"{x:08x}" for x in rng.choice(16**7, 8 * len(chosen), replace=False))
    base_ids = [next(ids) for _ in bases]
    docs, pairs = [], []
    levels, p = list(LEVEL_WEIGHTS), list(LEVEL_WEIGHTS.values())
    for b, (_, text) in enumerate(bases):
        family = [{"id": base_ids[b], "text": text, "family": f"b{b}", "level": "base"}]
        for _ in range(rng.randint(1, 4)):
            level = levels[rng.choice(len(levels), p=p)]
            donor = bases[(b + 1 + len(family)) % len(bases)][1]
            vt, log = variant(text, donor, level, rng)
            family.append({"id": next(ids), "text": vt, "family": f"b{b}", "level": level})
            family[-1]["edits"] = log
        for x, y in combinations(family, 2):
            pos = x["level"] in POSITIVE_LEVELS and y["level"] in POSITIVE_LEVELS
            pairs.append((x["id"], y["id"], "positive" if pos else "medium"))
        docs += family
    negatives = shared_paragraphs(bases, hosts, rng, n_bases // 4)
    for k, (b, _, text) in enumerate(negatives):
        hid = next(ids)
        docs.append({"id": hid, "text": text, "family": f"p{k}", "level": "shared_paragraph"})
        pairs.append((base_ids[b], hid, "shared_paragraph"))
    for g, group in enumerate(templates(hosts, {h for _, h, _ in negatives}, rng, n_bases // 20)):
        gids = [next(ids) for _ in group]
        for k, (gid, text) in enumerate(zip(gids, group, strict=True)):
            docs.append({"id": gid, "text": text, "family": f"t{g}.{k}", "level": "template"})
        pairs += [(a, b, "template") for a, b in combinations(gids, 2)]
    return docs, pairs
