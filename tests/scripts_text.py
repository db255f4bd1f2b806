"""Random text in each script the every-language rule names, for dedup tests: letters of the
script (CJK and Thai without spaces, a full stop after every 20 letters), words of 2-7 letters
in the spaced scripts (a full stop after every 12 words)."""

import random

ALPHABETS = {  # (first, last letter, spaced)
    "zh": (0x4E00, 0x4FFF, False),
    "ja": (0x3041, 0x3093, False),
    "th": (0x0E01, 0x0E2E, False),
    "ko": (0xAC00, 0xD7A3, True),  # Hangul syllables; Korean puts spaces between words
    "ar": (0x0627, 0x064A, True),
    "hi": (0x0915, 0x0939, True),
    "ru": (0x0430, 0x044F, True),
}


def text_in(lang: str, rng: random.Random, units: int = 300) -> str:
    lo, hi, spaced = ALPHABETS[lang]
    if not spaced:
        chars = [chr(rng.randint(lo, hi)) for _ in range(units)]
        return "".join(c + ("。" if i % 20 == 19 else "") for i, c in enumerate(chars))
    words = [
        "".join(chr(rng.randint(lo, hi)) for _ in range(rng.randint(2, 7))) for _ in range(units)
    ]
    return " ".join(w + ("." if i % 12 == 11 else "") for i, w in enumerate(words))
