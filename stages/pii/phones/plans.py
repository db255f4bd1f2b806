"""Phone numbers checked against the world's numbering plans (libphonenumber: the
`phonenumbers` package, the Python port of Google's library, which knows each country's number
lengths, ranges and national format).

The stage finds candidates itself (a regex scan and the rules of `candidates`); only those are
handed to the library. Written with a country code (`+41 (0)44 043 76 76`, `0041 ...`) a number
is checked for its own country; written without one, for the regions of the stage's
`phone_regions` (a number is national only for its country's readers, so the list is the
countries whose documents one expects) and, where the list holds `*` (the default), for every
other country too, there only at the stricter level VALID. The other countries are first
narrowed by their plans' lengths and general pattern (`fitting_regions`), so a number costs a
few lookups, not one per region; results are cached per chunk.

`exact_grouping`: a number is also a phone on its writing alone when it is valid in some
region's plan and written in exactly the groups of that region's national format (the library
matcher's leniency `EXACT_GROUPING`, less the solid runs of digits it also accepts).
"""

from __future__ import annotations

import re
from functools import lru_cache

import phonenumbers as pn

from gristmill.stages.pii.phones.shapes import suspicious
from gristmill.stages.pii.script import DIGITS

# Keep every compiled pattern of the metadata: across the regions the library's patterns are
# thousands, far more than the `re` module's own cache, which would compile them again on
# every lookup.
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
VALID, POSSIBLE = 2, 1


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
    patterns would narrow more but take several times as long to compile, and a whole corpus
    holds only a few dozen numbers to narrow."""
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


# -- the national format's groups ----------------------------------------------------------

_NATIONAL = pn.PhoneNumberFormat.NATIONAL
SOLID_TRUNK = (9, 11)  # digits of a solid number with a trunk prefix: `0612865908`
_MIN_DIGITS = 7  # shorter: the plans of a few islands, and every range and pair (`810/815`)
_YMD = re.compile(r"(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])")


def _matches(groups: list[str], seps: list[str], formatted: list[str]) -> bool:
    """The written groups are the formatted ones; or, written with a slash or a dot after the
    area code (`030/7093421`, `923/824885`, `020.79460958`), the first group and then the rest
    run together."""
    if groups == formatted:
        return True
    return (
        len(groups) == 2
        and seps[1] in ("/", ".")
        and groups[0] == formatted[0]
        and groups[1] == "".join(formatted[1:])
    )


@lru_cache(maxsize=4096)
def exact_grouping(chunk: str) -> bool:
    """Is `chunk` valid in some region's plan and written in exactly the groups of that
    region's national format (or as `_matches` allows, or solid: the format's digits, with
    its trunk prefix or in a plan with none; `candidates.grouped_phone` decides where a solid
    one counts)? Any region counts: a page in one language may give a number of another."""
    chunk = chunk.replace("(0)", "")
    groups = DIGITS.findall(chunk)
    digits = "".join(groups)
    seps = DIGITS.split(chunk)
    solid = len(groups) == 1
    if solid and (len(digits) > SOLID_TRUNK[1] or _YMD.fullmatch(digits)):
        return False  # 20240517: a date
    if len(digits) < _MIN_DIGITS or suspicious(groups, seps):
        return False
    for region in fitting_regions(digits):
        try:
            num = pn.parse(digits, region)
        except pn.NumberParseException:
            continue
        if num.country_code != pn.country_code_for_region(region):
            continue
        if not pn.is_valid_number_for_region(num, region):
            continue
        formatted = DIGITS.findall(pn.format_number(num, _NATIONAL))
        if solid and "".join(formatted) == digits:
            return True  # with its trunk prefix, or in a plan that has none
        if not solid and _matches(groups, seps, formatted):
            return True
    return False
