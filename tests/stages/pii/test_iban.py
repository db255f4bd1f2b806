"""IBANs (`stages/pii/iban.py`): the country's length and mod-97, solid or grouped."""

from gristmill.stages.pii.iban import iban_ok
from tests.stages.pii.helpers import finds


def test_iban():
    assert finds("IBAN DE89 3704 0044 0532 0130 00.") == [("DE89 3704 0044 0532 0130 00", "iban")]
    assert finds("IBAN DE89 3704 0044 0532 0130 01.") == []  # mod 97 fails
    assert finds("IBAN DE89 3704 0044 0532 0130") == []  # too short for DE


def test_mod97_on_published_examples():
    assert iban_ok("GB82WEST12345698765432") and not iban_ok("GB82WEST12345698765433")
