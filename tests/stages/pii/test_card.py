"""Payment cards (`stages/pii/card.py`): issuer prefix and length, Luhn, groupings."""

from gristmill.stages.pii.card import luhn_ok
from tests.stages.pii.helpers import finds


def test_credit_card():
    assert finds("card 4111-1111-1111-1111") == [("4111-1111-1111-1111", "credit_card")]
    assert finds("Maestro 6759 5260 1812") == [("6759 5260 1812", "credit_card")]
    assert finds("card 4111 1111 1111 1112") == []  # Luhn fails
    assert finds("card 9111 1111 1111 1119") == []  # no issuer starts with 9


def test_luhn_on_published_examples():
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
