"""National ids (`stages/pii/national_ids.py`): each with its check, and a word where the shape
is shared with other numbers."""

from gristmill.stages.pii.national_ids import de_svnr_ok, es_dni_ok, fr_nir_ok, it_cf_ok, ssn_ok
from tests.stages.pii.helpers import finds


def test_national_ids():
    assert finds("SSN 536-22-1234") == [("536-22-1234", "national_id")]
    for bad in ("000-22-1234", "666-22-1234", "936-22-1234", "536-00-1234", "536-22-0000"):
        assert finds(f"SSN {bad}") == [], bad
    assert finds("part 536 22 1234") == []  # spaced, no SSN word: could be anything
    assert finds("NI AB123456C") == [("AB123456C", "national_id")]
    assert finds("chip PM820092D") == []  # the NINO shape, no NINO word
    assert finds("SV 65 170839 J 003") == [("65 170839 J 003", "national_id")]
    assert finds("SV 65 170839 J 004") == []  # check digit
    assert finds("national_id off: 536-22-1234", national_ids=["uk_nino"]) == []


def test_checks_on_published_examples():
    assert de_svnr_ok("15070649C103")
    assert fr_nir_ok("269054958815780")  # the example on the French social security card
    assert es_dni_ok("12345678Z") and not es_dni_ok("12345678A")
    assert it_cf_ok("RSSMRA85T10A562S") and not it_cf_ok("RSSMRA85T10A562T")
    assert ssn_ok("536221234") and not ssn_ok("123456789")
