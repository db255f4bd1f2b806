"""Language codes of two label sets, and the key a per-language setting is found under.

lid.176 labels a language by its ISO 639-1 code where it has one (`en`, `zh`), else a
three-letter one (`ceb`); a GlotLID-style model (GlotLID, as FineWeb-2 runs it) by its ISO 639-3
code and ISO 15924 script (`eng_Latn`, `cmn_Hani`, `rus_Cyrl`). The shipped per-language data
(stop words, quality settings, safety lists) is keyed by lid.176's codes. A GlotLID label finds
it by its ISO 639-1 code (`iso639_1`), from `stages/data/iso639.tsv` (written by
tools/iso639_table.py from CLDR's data): its own two-letter code, or its macrolanguage's where it
is that macrolanguage's dominant member (`cmn` -> `zh`, `arb` -> `ar`), and only when the label's
script is the one the language is usually written in, so romanised Hindi (`hin_Latn`) does not get
Devanagari stop words. A label without one (`yue_Hani`, `hin_Latn`, `ceb_Latn`) is looked up as
itself and, found nowhere, gets the `default` settings. Any other code (lid.176's, a bare code)
is only itself: a run with lid.176 finds exactly what it found before.
"""

from __future__ import annotations

import re
from functools import cache

from gristmill.stages.text.wordlists import DATA

LABEL = re.compile(r"^([a-z]{3})_([A-Z][a-z]{3})$")  # GlotLID's `eng_Latn`

# ISO 15924 scripts that stand for others: Han in its simplified and traditional forms, Japanese
# (Han + Hiragana + Katakana), Korean (Hangul + Han). GlotLID writes `cmn_Hani`, `jpn_Jpan`,
# `kor_Hang`; CLDR's likely scripts are `Hans`, `Jpan`, `Kore`.
SCRIPT_FAMILIES = (
    frozenset({"Hani", "Hans", "Hant"}),
    frozenset({"Jpan", "Hani", "Hira", "Kana", "Hrkt"}),
    frozenset({"Kore", "Hang", "Hani"}),
)


@cache
def table() -> dict[str, tuple[str, str]]:
    """ISO 639-3 code -> (ISO 639-1 code, the script it is usually written in)."""
    out = {}
    for line in (DATA / "iso639.tsv").read_text(encoding="utf-8").splitlines()[3:]:
        a3, a2, script, _via = line.split("\t")
        out[a3] = (a2, script)
    return out


def same_script(label: str, usual: str) -> bool:
    """Whether a label's script is the usual one, or one of the scripts a composite one covers."""
    return label == usual or any(label in f and usual in f for f in SCRIPT_FAMILIES)


@cache
def iso639_1(code: str | None) -> str | None:
    """The ISO 639-1 code of a GlotLID-style label (`eng_Latn` -> `en`, `cmn_Hani` -> `zh`),
    or None: a label without one, or in a script its language is not usually written in, and
    any code that is no GlotLID-style label."""
    m = LABEL.match(code or "")
    if m is None:
        return None
    a2, usual = table().get(m[1], (None, ""))
    return a2 if a2 and same_script(m[2], usual) else None


def settings_code(code: str | None) -> str | None:
    """The code the shipped per-language data is keyed by: the ISO 639-1 code of a GlotLID
    label that has one, else the code itself."""
    return iso639_1(code) or code


def lookup_keys(code: str) -> tuple[str, ...]:
    """The keys a per-language map is searched for, in order: the label, then its ISO 639-1
    code (`cmn_Hani` -> (`cmn_Hani`, `zh`)); lid.176's `zh` -> (`zh`,)."""
    one = iso639_1(code)
    return (code,) if one is None else (code, one)


def find(mapping, code: str | None, default=None):
    """`mapping`'s value for a language (the first of `lookup_keys` it holds), else `default`."""
    for key in lookup_keys(code or ""):
        if key in mapping:
            return mapping[key]
    return default
