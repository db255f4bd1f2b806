"""Text normalisation shared by the exact dedup levels: what does not make two texts different."""

from __future__ import annotations

import unicodedata

import xxhash


def normalize(text: str) -> str:
    """Case, Unicode compatibility forms and whitespace runs do not make a document different."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def text_hash(text: str) -> str:
    return xxhash.xxh3_128_hexdigest(normalize(text).encode("utf-8"))
