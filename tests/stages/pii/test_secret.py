"""Secrets (`stages/pii/secret.py`): key blocks, vendor tokens, named high-entropy values."""

from gristmill.stages.pii.secret import entropy_bits
from tests.stages.pii.helpers import finds


def test_secrets():
    key = "ghp_Z8r2Kq9Lm3Np4Xv5Bt6Wc7Yd8Fg9Hj0Ks1Qa"
    assert finds(f"token {key}") == [(key, "secret")]
    assert finds("api_key = 'Hq7ZpD2xVb9WmT4kLr8s'") == [("Hq7ZpD2xVb9WmT4kLr8s", "secret")]
    assert finds("password: S3cr3t!pass") == [("S3cr3t!pass", "secret")]
    for text in (
        "password: <your password>",
        "api_key = YOUR_API_KEY_HERE_1234",
        "monkey: 1234567890abcdefABCD",  # `monkey` is no secret's name
        "signing key: d69a84e6bce3d216b979e9505b3e3ef9a7118079",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----",
    ):
        assert finds(text) == [], text


def test_entropy_separates_tokens_from_words():
    assert entropy_bits("aaaaaaaa") == 0
    assert entropy_bits("Hq7ZpD2xVb9WmT4kLr8s") > 4 > entropy_bits("passwordpassword")
