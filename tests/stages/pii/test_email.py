"""Email addresses (`stages/pii/email.py`): plain and obfuscated, allowed domains."""

from tests.stages.pii.helpers import finds


def test_email():
    assert finds("mail jo.smith+x@mail-host.co.uk now") == [("jo.smith+x@mail-host.co.uk", "email")]
    assert finds("jo [at] host [dot] com") == [("jo [at] host [dot] com", "email")]
    assert finds("jo [at] host [dot] com", email_obfuscations=False) == []
    for text in ("icon@2x.png", "user@localhost", "team@example.com", "a@b.test", "@decorator"):
        assert finds(text) == [], text
    assert finds("team@example.com", allow_email_domains=[]) == [("team@example.com", "email")]
