"""Phone numbers checked against the world's numbering plans, for the `pii` stage.

The stage finds candidates itself (a regex scan and the shape rules of `pii_shapes`, fast and
cheap); only those are handed to libphonenumber (the `phonenumbers` package, the Python port of
Google's library, which knows each country's number lengths and ranges). Written with a country
code (`+41 (0)44 043 76 76`, `0041 ...`) a number is checked for its own country; written
without one, for the regions of the stage's `phone_regions` list (a number is national only
for its country's readers, so the list is the countries whose documents one expects). A check
costs about 50 microseconds per region; results are cached per digit string.
"""

from __future__ import annotations

from functools import lru_cache

import phonenumbers as pn

# Without a country code a number is tried as a national number of each of these: the most
# populous and most written-about countries on every continent (ISO 3166-1 alpha-2).
DEFAULT_REGIONS = (
    "US", "GB", "CA", "AU", "IN", "DE", "FR", "ES", "IT", "NL", "BE", "CH", "AT", "PL", "SE",
    "PT", "IE", "BR", "MX", "AR", "CO", "RU", "UA", "TR", "CN", "JP", "KR", "TW", "HK", "SG",
    "TH", "VN", "ID", "PH", "MY", "SA", "AE", "EG", "IL", "ZA", "NG", "PK",
)  # fmt: skip


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

    def __init__(self, regions: tuple[str, ...] | list[str] = DEFAULT_REGIONS):
        self.regions = tuple(regions)
        self.valid = lru_cache(maxsize=4096)(self._valid)

    def _valid(self, chunk: str, need: int) -> bool:
        chunk = chunk.replace("(0)", "")  # `+41 (0)44 ...`: the trunk 0 is not dialled
        digits = "".join(c for c in chunk if c.isdigit())
        intl = international(chunk, digits)
        if intl is not None:
            return _level(intl, None) >= need
        return any(_level(chunk, r) >= need for r in self.regions)


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
