"""Text normalisation shared by the exact dedup levels: what does not make two texts different."""

from __future__ import annotations

import unicodedata

import xxhash


def normalize(text: str) -> str:
    """Case, Unicode compatibility forms and whitespace runs do not make a document different."""
    return " ".join(nfkc(text).lower().split())


def nfkc(text: str) -> str:
    """`unicodedata.normalize("NFKC", text)`, line by line where the text is not NFKC already.
    A line feed composes with nothing and reorders with nothing, so NFKC never reaches across
    one; Python's NFKC decomposes and recomposes the whole text, while a web page that needs it
    usually needs it on a few lines only (a no-break space, a full-width form), so only those
    are normalised (tests/stages/dedup/test_exact.py checks every code point)."""
    if unicodedata.is_normalized("NFKC", text):
        return text
    lines = text.split("\n")
    return "\n".join(
        line if unicodedata.is_normalized("NFKC", line) else unicodedata.normalize("NFKC", line)
        for line in lines
    )


def text_hash(text: str) -> str:
    return xxhash.xxh3_128_hexdigest(normalize(text).encode("utf-8"))
