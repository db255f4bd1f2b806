"""Phone numbers checked against the world's numbering plans, for the `pii` stage.

The stage finds candidates itself (a regex scan and the shape rules of `pii_shapes`, fast and
cheap); only those are handed to libphonenumber (the `phonenumbers` package, the Python port of
Google's library, which knows each country's number lengths and ranges). Written with a country
code (`+41 (0)44 043 76 76`, `0041 ...`) a number is checked for its own country; written
without one, for the regions of the stage's `phone_regions` list (a number is national only
for its country's readers, so the list is the countries whose documents one expects), and,
where the list holds `*` (the default), for every other country too, but there only at the
stricter level VALID and only where the stage has more evidence (a phone word, or a trunk prefix
and phone-like grouping: `pii_numbers`). A check costs about 50 microseconds per region; the
other countries are first narrowed by their plans' lengths and general pattern (a compiled regex
each, a microsecond), so a number costs a few lookups, not 240; results are cached per chunk.
"""

from __future__ import annotations

import re
from functools import lru_cache

import phonenumbers as pn

# Keep every compiled pattern of the metadata: across 245 regions the library's patterns are
# thousands, far more than the `re` module's own cache of 512, which would compile them again
# on every lookup (about 1 ms a number checked against a dozen regions).
pn.enable_pattern_cache()

# Without a country code a number is tried as a national number of each of these: the most
# populous and most written-about countries on every continent (ISO 3166-1 alpha-2).
DEFAULT_REGIONS = (
    "US", "GB", "CA", "AU", "IN", "DE", "FR", "ES", "IT", "NL", "BE", "CH", "AT", "PL", "SE",
    "PT", "IE", "BR", "MX", "AR", "CO", "RU", "UA", "TR", "CN", "JP", "KR", "TW", "HK", "SG",
    "TH", "VN", "ID", "PH", "MY", "SA", "AE", "EG", "IL", "ZA", "NG", "PK",
)  # fmt: skip
ANY = "*"  # in `phone_regions`: and every other region, at the level VALID, with more evidence
ALL_REGIONS = tuple(sorted(r for r in pn.SUPPORTED_REGIONS if r != "001"))


def international(chunk: str, digits: str) -> str | None:
    """`+` and the digits when `chunk` is written with a country code (`+`, or `00` then a
    digit other than 0); else None."""
    if chunk.startswith(("+", "(+")):
        return "+" + digits
    if digits.startswith("00") and digits[2:3] not in ("", "0"):
        return "+" + digits[2:]
    return None


class PhoneCheck:
    """`valid(chunk, need)`: is the number at least `need` (VALID or POSSIBLE) in its country's
    plan, or (written without a country code) in the plan of one of `regions`? The regions are
    tried in turn until one answers yes."""

    def __init__(self, regions: tuple[str, ...] | list[str] = (*DEFAULT_REGIONS, ANY)):
        self.regions = tuple(r for r in regions if r != ANY)
        self.others = ANY in regions
        self._caches()

    def _caches(self) -> None:
        self.valid = lru_cache(maxsize=4096)(self._valid)
        self.valid_elsewhere = lru_cache(maxsize=4096)(self._valid_elsewhere)

    # The caches wrap bound methods, which do not pickle: a stage sent to a Ray worker or a
    # Slurm job carries the settings and builds its caches again there.
    def __getstate__(self) -> dict:
        return {"regions": self.regions, "others": self.others}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._caches()

    def _valid(self, chunk: str, need: int) -> bool:
        chunk = chunk.replace("(0)", "")  # `+41 (0)44 ...`: the trunk 0 is not dialled
        digits = "".join(c for c in chunk if c.isdigit())
        intl = international(chunk, digits)
        if intl is not None:
            return _level(intl, None) >= need
        return any(_level(chunk, r) >= need for r in self.regions)

    def valid_anywhere(self, chunk: str) -> bool:
        """VALID in the plan of one of `regions`, or (with `*`) of any other region."""
        return self.valid(chunk, VALID) or self.valid_elsewhere(chunk)

    def _valid_elsewhere(self, chunk: str) -> bool:
        """Written without a country code, is the number VALID in the plan of a region not in
        `regions` (when `phone_regions` holds `*`)?"""
        if not self.others:
            return False
        chunk = chunk.replace("(0)", "")
        digits = "".join(c for c in chunk if c.isdigit())
        if international(chunk, digits) is not None:
            return False
        done = set(self.regions)
        return any(_level(chunk, r) >= VALID for r in fitting_regions(digits) if r not in done)


VALID, POSSIBLE = 2, 1


def _level(number: str, region: str | None) -> int:
    """VALID (a number of the plan), POSSIBLE (of a length the plan has: fictional ranges such
    as 555-01xx or 07700 900xxx, and numbers newer than the metadata) or 0."""
    try:
        num = pn.parse(number, region)
    except pn.NumberParseException:
        return 0
    if region is not None and num.country_code != pn.country_code_for_region(region):
        return 0  # `011 44 ...` parsed as a US call abroad: not a national number
    if pn.is_valid_number(num):
        return VALID
    return POSSIBLE if pn.is_possible_number(num) else 0


@lru_cache(maxsize=1)
def _plans() -> tuple[tuple[str, re.Pattern | None, bool, frozenset[int], re.Pattern], ...]:
    """(region, its national prefix for parsing, whether the library rewrites what that
    prefix matched, lengths, its plan's general pattern) of every region's plan: a valid number
    fits the general pattern (the union of the number types' patterns). The types' own
    patterns would narrow more, but take seven times as long to compile (0.25 against 0.035
    CPU-s for the 245 regions), and a whole corpus holds only a few dozen numbers to narrow."""
    out = []
    for r in ALL_REGIONS:
        m = pn.PhoneMetadata.metadata_for_region(r)
        pattern = re.compile(m.general_desc.national_number_pattern or "(?!)")
        npp = m.national_prefix_for_parsing or m.national_prefix
        prefix = re.compile(npp) if npp else None
        rewrites = bool(m.national_prefix_transform_rule)
        out.append((r, prefix, rewrites, frozenset(m.general_desc.possible_length), pattern))
    return tuple(out)


def fitting_regions(digits: str) -> list[str]:
    """Regions whose plan's lengths and general pattern the national number fits, as written
    or after the region's national (trunk) prefix; a superset of the regions where it is valid
    (the library then decides), in a fraction of the time. A region whose library rewrites
    the prefix (`011 15-...` in Argentina) is kept whenever its prefix is there."""
    out = []
    for r, prefix, rewrites, lengths, pattern in _plans():
        m = prefix.match(digits) if prefix is not None else None
        if m is not None and m.end() and rewrites:
            out.append(r)
            continue
        nsn = digits[m.end() :] if m is not None else digits
        if any(len(x) in lengths and pattern.fullmatch(x) for x in {nsn, digits}):
            out.append(r)
    return out
