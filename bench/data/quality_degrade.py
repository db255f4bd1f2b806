"""Bad pages made from good ones, for the quality score's development data
(`bench/data/quality_domains.py`): each function takes a clean text and a seeded `Random` and
returns the same words arranged the way a bad page arranges them, so that what separates the
two is the structure, never the vocabulary or the language.

- `shuffled`: the text cut at random word positions into lines of 2 to 9 words, in random order
  (a scrambled or machine-joined page);
- `keywords`: 1 to 3 words of the text a line, or many joined by commas (tag clouds, keyword
  stuffing);
- `links`: the openings of the text's lines as menu items, a few per line joined by `|`, `»` or
  `·`, or one per line behind a bullet, around one paragraph of the text (a navigation page);
- `boilerplate`: one block of the text's short lines repeated 6 to 14 times between a few of
  its paragraphs (a page template repeated by a bad crawl or pagination);
- `fragments`: every line cut to its first 25% to 60% of words, terminal punctuation gone
  (teasers, truncated snippets).

Scripts without spaces are cut into runs of two characters instead of words, so Chinese,
Japanese and Thai get the same damage.
"""

from __future__ import annotations

import random

from gristmill.stages.text.scripts import is_spaceless

KINDS = ("shuffled", "keywords", "links", "boilerplate", "fragments")
SEPARATORS = (" | ", " » ", " · ", " / ")
BULLETS = ("• ", "- ", "* ", "› ")


def _units(text: str) -> tuple[list[str], str]:
    """The text's words (or two-character runs for a script without spaces) and the joiner."""
    chars = [c for c in text if not c.isspace()]
    spaceless = sum(map(is_spaceless, chars)) > 0.3 * max(1, len(chars))
    if not spaceless:
        return text.split(), " "
    flat = "".join(chars)
    return [flat[i : i + 2] for i in range(0, len(flat), 2)], ""


def _lines(text: str) -> list[str]:
    return [s.strip() for s in text.split("\n") if s.strip()]


def shuffled(text: str, rng: random.Random) -> str:
    words, join = _units(text)
    out, i = [], 0
    while i < len(words):
        n = rng.randint(2, 9)
        out.append(join.join(words[i : i + n]))
        i += n
    rng.shuffle(out)
    return "\n".join(out)


def keywords(text: str, rng: random.Random) -> str:
    words, join = _units(text)
    vocab = sorted({w.strip(".,;:!?()[]\"'。，、！？") for w in words} - {""})
    if not vocab:
        return text
    n = min(len(vocab), rng.randint(40, 160))
    picked = rng.sample(vocab, n)
    if rng.random() < 0.3:  # one stuffed line, or a few
        cut = max(1, n // rng.randint(1, 4))
        return "\n".join(", ".join(picked[i : i + cut]) for i in range(0, n, cut))
    out, i = [], 0
    while i < n:
        k = rng.randint(1, 3)
        out.append(join.join(picked[i : i + k]))
        i += k
    return "\n".join(out)


def _items(text: str, rng: random.Random, n: int) -> list[str]:
    """Menu-like items: the first 1 to 4 words of random lines of the text."""
    lines = _lines(text) or [text]
    out = []
    for _ in range(n):
        words, join = _units(rng.choice(lines))
        if words:
            out.append(join.join(words[: rng.randint(1, 4)]).rstrip(".,;:!?。，！？"))
    return [s for s in out if s]


def links(text: str, rng: random.Random) -> str:
    paragraphs = [p for p in text.split("\n\n") if p.strip()] or [text]
    body = rng.choice(paragraphs).strip()
    blocks = []
    for _ in range(rng.randint(3, 6)):
        items = _items(text, rng, rng.randint(4, 12))
        if rng.random() < 0.5:
            sep = rng.choice(SEPARATORS)
            blocks.append("\n".join(sep.join(items[i : i + 4]) for i in range(0, len(items), 4)))
        else:
            bullet = rng.choice(BULLETS + ("",))
            blocks.append("\n".join(bullet + s for s in items))
    at = rng.randint(0, len(blocks))
    return "\n\n".join(blocks[:at] + [body] + blocks[at:])


def boilerplate(text: str, rng: random.Random) -> str:
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()] or [text]
    block = "\n".join(_items(text, rng, rng.randint(3, 6)))
    keep = paragraphs[: rng.randint(1, 3)]
    out = []
    for i in range(rng.randint(6, 14)):
        out.append(block)
        if i < len(keep):
            out.append(keep[i])
    return "\n\n".join(out)


def fragments(text: str, rng: random.Random) -> str:
    out = []
    for line in _lines(text):
        words, join = _units(line)
        if len(words) < 2:
            continue
        cut = max(1, int(len(words) * rng.uniform(0.25, 0.6)))
        out.append(join.join(words[:cut]).rstrip(".!?;。．！？｡"))
    return "\n".join(out) or text


DEGRADE = {
    "shuffled": shuffled,
    "keywords": keywords,
    "links": links,
    "boilerplate": boilerplate,
    "fragments": fragments,
}


def degrade(text: str, kind: str, seed: int) -> str:
    """`text` damaged the way `kind` says (one of KINDS), reproducibly from `seed`."""
    return DEGRADE[kind](text, random.Random(seed))
