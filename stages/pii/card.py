"""Payment card numbers, for the `pii` stage: 12 to 19 digits, solid or in the issuers' groups,
with an issuer's prefix and length and a valid Luhn digit. The checks are what make the shape
precise: a 16-digit order number fails Luhn nine times in ten."""

from __future__ import annotations

from gristmill.stages.pii.script import DIGITS


def luhn_ok(digits: str) -> bool:
    """The Luhn (mod 10) check of payment card numbers (ISO/IEC 7812-1)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# Issuer identification prefixes and the lengths each issuer uses (public IIN tables). A number
# must fit one of them before Luhn is even tried. Ranges are inclusive, compared on the first
# len(lo) digits.
CARD_ISSUERS: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("4", "4", (13, 16, 19)),  # Visa
    ("51", "55", (16,)),  # Mastercard
    ("2221", "2720", (16,)),  # Mastercard 2-series
    ("34", "34", (15,)),  # American Express
    ("37", "37", (15,)),
    ("300", "305", (14, 16, 19)),  # Diners Club
    ("36", "36", (14, 16, 19)),
    ("38", "39", (14, 16, 19)),
    ("6011", "6011", (16, 19)),  # Discover
    ("644", "649", (16, 19)),
    ("65", "65", (16, 19)),
    ("3500", "3599", (16, 19)),  # JCB (3528-3589 assigned; the rest of 35 is no one else's)
    ("2131", "2131", (15,)),  # JCB (legacy 15-digit)
    ("1800", "1800", (15,)),
    ("62", "62", (16, 17, 18, 19)),  # UnionPay
    ("2200", "2204", (16, 17, 18, 19)),  # Mir
    ("5018", "5018", tuple(range(12, 20))),  # Maestro: 12 to 19 digits
    ("5020", "5020", tuple(range(12, 20))),
    ("5038", "5038", tuple(range(12, 20))),
    ("56", "58", tuple(range(12, 20))),
    ("5893", "5893", tuple(range(12, 20))),
    ("6304", "6304", tuple(range(12, 20))),
    ("6759", "6759", tuple(range(12, 20))),
    ("6761", "6763", tuple(range(12, 20))),
    ("0604", "0604", tuple(range(12, 20))),
)


def card_ok(digits: str) -> bool:
    """A known issuer prefix with one of its lengths, and a valid Luhn digit."""
    n = len(digits)
    if not 12 <= n <= 19 or digits.count(digits[0]) == n:
        return False
    for lo, hi, lengths in CARD_ISSUERS:
        if n in lengths and lo <= digits[: len(lo)] <= hi:
            return luhn_ok(digits)
    return False


def card_shape(chunk: str) -> bool:
    """Digits alone, or groups of 4 (Amex 4-6-5, Diners 4-6-4) split by one kind of separator."""
    if chunk.isdigit():
        return True
    groups = DIGITS.findall(chunk)
    seps = set(DIGITS.split(chunk)[1:-1])
    if len(seps) != 1 or not seps <= {" ", "-"}:
        return False
    lens = [len(g) for g in groups]
    if lens in ([4, 6, 5], [4, 6, 4]):
        return True
    return all(x == 4 for x in lens[:-1]) and 1 <= lens[-1] <= 4


def card_at(num) -> int:
    """A card number at the candidate `num` of `numbers` (a chunk's head: a card is never the
    tail of a longer run of digit groups), with no veto word nearer than a card word; its end,
    or 0."""
    if not (12 <= len(num.digits) <= 19 and card_shape(num.chunk) and num.head):
        return 0
    if not card_ok(num.digits) or num.context(num.s, ("card",)) == "veto":
        return 0
    num.emit(num.s, num.e, "credit_card")
    return num.e
