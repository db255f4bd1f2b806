"""Fake personal data and URL spellings for the sample corpus generator.

Every value is drawn from the caller's seeded ``random.Random``. Card numbers pass the Luhn
check and IBANs pass mod-97, but both are random. IP addresses come from the documentation
ranges (RFC 5737, RFC 3849), UK phone numbers from the range set aside for drama (020 7946
0xxx), US ones use 555-style numbers, and the e-mail domains are invented.
"""

import string
from urllib.parse import parse_qsl, urlencode, urlsplit

import _texts as T

IBAN_COUNTRY = {"en": "GB", "de": "DE", "fr": "FR"}
TRACKING = ("utm_", "fbclid", "gclid")
TRACKING_QUERIES = [
    "utm_source=newsletter&utm_medium=email&utm_campaign=weekly",
    "utm_source=facebook&utm_medium=social",
    "fbclid=IwAR{token}",
    "gclid=Cj0KCQ{token}",
    "utm_source=twitter&fbclid=IwAR{token}",
]


def digits(rng, k):
    return "".join(str(rng.randint(0, 9)) for _ in range(k))


def luhn_ok(number):
    ds = [int(c) for c in number if c.isdigit()][::-1]
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(ds))
    return total % 10 == 0


def make_card(rng):
    prefix = rng.choice(["4", f"5{rng.randint(1, 5)}", rng.choice(["34", "37"])])
    length = 15 if prefix in ("34", "37") else 16  # American Express has 15 digits
    body = prefix + digits(rng, length - len(prefix) - 1)
    number = next(body + c for c in string.digits if luhn_ok(body + c))
    if length == 15:
        return f"{number[:4]} {number[4:10]} {number[10:]}"
    return rng.choice([" ", "-", ""]).join(number[i : i + 4] for i in range(0, 16, 4))


def iban_number(s):
    return int("".join(str(int(c, 36)) for c in s))


def iban_ok(iban):
    s = iban.replace(" ", "")
    return iban_number(s[4:] + s[:4]) % 97 == 1


def make_iban(rng, country):
    bban = {"DE": digits(rng, 18), "GB": "XMPL" + digits(rng, 14), "FR": digits(rng, 23)}[country]
    iban = f"{country}{98 - iban_number(bban + country + '00') % 97:02d}{bban}"
    return " ".join(iban[i : i + 4] for i in range(0, len(iban), 4))


def pii_values(rng, lang, names):
    ipv6 = [
        f"2001:db8:{rng.randint(1, 0xFFFF):x}::{rng.randint(1, 0xFFFF):x}",
        f"2001:0db8:0000:0000:0000:ff00:0042:{rng.randint(0, 0xFFFF):04x}",
    ]
    return {
        "email": f"{rng.choice(T.EMAIL_USERS[lang])}@{rng.choice(T.EMAIL_DOMAINS[lang])}",
        "phone_us": f"(555) 01{rng.randint(0, 9)}-{digits(rng, 4)}",
        "phone_uk": f"+44 20 7946 0{digits(rng, 3)}",
        "phone_de": f"+49 30 9018{rng.randint(10, 99)}",
        "phone_fr": "+33 1 " + " ".join(str(rng.randint(10, 99)) for _ in range(4)),
        "ipv4": f"{rng.choice(['192.0.2', '198.51.100', '203.0.113'])}.{rng.randint(1, 254)}",
        "ipv6": rng.choice(ipv6),
        "person": rng.choice(T.PII_PERSONS),
        "card": make_card(rng) if "card" in names else "",
        "iban": make_iban(rng, IBAN_COUNTRY[lang]) if "iban" in names else "",
    }


def lookalike_values(rng, lang):
    return {
        "ver": ".".join(str(rng.randint(0, 12)) for _ in range(4)),
        "iso_date": f"{rng.randint(2022, 2024)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "order": f"{rng.choice('ABCDEFGHK')}-{rng.randint(10000, 99999)}-{rng.randint(10, 99)}",
        "price": T.PRICE_FORMATS[lang].format(rng.randint(3, 199), rng.randint(0, 99)),
    }


def url_variant(rng, url, tracking):
    """Another raw spelling of ``url`` that normalises back to it."""
    parts = urlsplit(url)
    scheme, host, path, query, frag = parts.scheme, parts.netloc, parts.path, "", ""
    ops = rng.sample(["case", "www", "port", "slash", "frag"], rng.randint(1, 3))
    ops += ["port"] if scheme == "http" else []  # so that ":80" shows up too
    if "case" in ops:
        host = rng.choice([host.upper(), ".".join(p.capitalize() for p in host.split("."))])
        scheme = rng.choice([scheme, scheme.upper()])
    if "www" in ops:
        host = host[4:] if host.lower().startswith("www.") else "www." + host
    if "port" in ops:
        host += ":443" if scheme.lower() == "https" else ":80"
    if "slash" in ops:
        path += "/"
    if "frag" in ops:
        frag = rng.choice(["#comments", "#top", "#section-2"])
    if tracking:
        token = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(22))
        query = "?" + rng.choice(TRACKING_QUERIES).format(token=token)
    return f"{scheme}://{host}{path}{query}{frag}"


def normalise_url(url):
    """Lower-case scheme and host, drop www., default ports, tracking keys, '/' and '#...'."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    if parts.port not in (None, 80, 443):
        host += f":{parts.port}"
    query = urlencode([kv for kv in parse_qsl(parts.query) if not kv[0].startswith(TRACKING)])
    return f"{parts.scheme.lower()}://{host}{parts.path.rstrip('/')}{'?' * bool(query)}{query}"
