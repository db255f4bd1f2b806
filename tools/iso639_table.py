"""Writes `stages/data/iso639.tsv`: the ISO 639-1 code of each ISO 639-3 code that has one, and
the script that language is usually written in, from the CLDR data the `langcodes` package
ships (pinned in the `dev` extra). Run from the repository root:
`python -m tools.iso639_table`.

A row comes from one of two relations, named in its `via` column:
- `iso639`: the language's own two-letter code (`eng` -> `en`, `rus` -> `ru`), from
  `LANGUAGE_ALPHA3`; the two-letter codes ISO has withdrawn (`in`, `iw`, `ji`, `jw`, `mo`,
  `sh`: CLDR replaces each by another two-letter code) and CLDR's regional tags are left out.
- `macrolanguage`: an individual language that CLDR replaces by its macrolanguage's code because
  it is the macrolanguage's dominant member (`cmn` -> `zh`, `arb` -> `ar`, `zsm` -> `ms`), from
  `NORMALIZED_MACROLANGUAGES`. Other members of a macrolanguage (`yue`, Cantonese, in `zh`) have
  no row: their text is not what the macrolanguage's settings were written for.

The script is CLDR's likely script of the two-letter code (`zh` -> `Hans`, `sr` -> `Cyrl`): a
GlotLID label in another script (`hin_Latn`, romanised Hindi) is not given the settings of the
code, whose stop words are in its usual script (stages/text/iso639.py).
"""

from __future__ import annotations

import argparse
from importlib.metadata import version
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "stages" / "data" / "iso639.tsv"


def rows() -> list[tuple[str, str, str, str]]:
    """(iso639_3, iso639_1, script, via), sorted by the ISO 639-3 code."""
    import langcodes
    from langcodes import data_dicts as cldr

    # ISO's withdrawn codes: CLDR replaces each by another two-letter one (`sh` -> `sr-Latn`)
    withdrawn = {
        a2
        for a2, to in cldr.LANGUAGE_REPLACEMENTS.items()
        if len(a2) == 2 and len(to.split("-")[0]) == 2 and to.split("-")[0] != a2
    }
    out: dict[str, tuple[str, str]] = {}
    for a2, a3 in cldr.LANGUAGE_ALPHA3.items():
        if len(a2) == 2 and a2 not in withdrawn:
            out[a3] = (a2, "iso639")
    for a3, macro in cldr.NORMALIZED_MACROLANGUAGES.items():
        if len(a3) == 3 and len(macro) == 2 and macro not in withdrawn and a3 not in out:
            out[a3] = (macro, "macrolanguage")
    script = {a2: langcodes.Language.get(a2).maximize().script or "" for a2, _ in out.values()}
    return sorted((a3, a2, script[a2], via) for a3, (a2, via) in out.items())


def write(path: Path = OUT) -> int:
    lines = [
        f"# ISO 639-3 -> ISO 639-1, written by tools/iso639_table.py from langcodes "
        f"{version('langcodes')} (CLDR): a language's own two-letter code (via iso639) or its",
        "# macrolanguage's where CLDR names it the dominant member (via macrolanguage); script: "
        "CLDR's likely script of the two-letter code. Do not edit by hand.",
        "iso639_3\tiso639_1\tscript\tvia",
    ]
    table = rows()
    lines += ["\t".join(r) for r in table]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(table)


def markdown(path: Path = OUT) -> str:
    """The shipped table as docs/stages/langid.md lists it (tests/stages/text/test_iso639.py
    checks that the page holds it)."""
    head = "| ISO 639-3 | ISO 639-1 | script | via |\n|---|---|---|---|\n"
    body = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[3:]]
    return head + "".join(f"| `{a}` | `{b}` | {s} | {v} |\n" for a, b, s, v in body)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--markdown", action="store_true", help="print the docs' table")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown(), end="")
        return
    print(f"{write(args.out)} rows -> {args.out}")


if __name__ == "__main__":
    main()
