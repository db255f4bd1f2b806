"""Hand-written PII cases, harder than the template set: local phone formats, order numbers next
to phone numbers, IPv6, 12-digit cards, non-US national ids, obfuscated emails, secrets, plus
look-alikes that must never be redacted. Used by tests/stages/pii/test_stage.py and by
bench/evals/pii_eval.py.

Every value is made up (card numbers are issuer test numbers or generated to pass Luhn; ids are
generated to pass their checksums). A labelled value is written `⟦type|value⟧`.
"""

from __future__ import annotations

import re

MARK = re.compile(r"⟦(\w+)\|(.*?)⟧", re.S)


def parse(marked: str) -> tuple[str, list[tuple[int, int, str]]]:
    """`call ⟦phone|555-0134⟧` -> ("call 555-0134", [(5, 13, "phone")])."""
    out, spans, pos = [], [], 0
    for m in MARK.finditer(marked):
        out.append(marked[pos : m.start()])
        start = sum(len(x) for x in out)
        out.append(m.group(2))
        spans.append((start, start + len(m.group(2)), m.group(1)))
        pos = m.end()
    out.append(marked[pos:])
    return "".join(out), spans


HARD = [
    # phones: national formats without a country code, next to other numbers
    "Ruf mich an unter ⟦phone|030 12345678⟧ oder mobil ⟦phone|0151 23456789⟧.",
    "Tel. ⟦phone|089/1234567⟧, Fax ⟦phone|089/1234568⟧",
    "Appelez-moi au ⟦phone|06 12 34 56 78⟧ ou au ⟦phone|+33 1 23 45 67 89⟧.",
    "Standard : ⟦phone|01.45.67.89.10⟧ (du lundi au vendredi)",
    "UK office: ⟦phone|020 7946 0958⟧, mobile ⟦phone|07700 900123⟧.",
    "US line ⟦phone|(415) 555-0132⟧ or toll free ⟦phone|1-800-555-0199⟧",
    "Order #4521-3399 shipped. Questions? Call us at ⟦phone|555-0134⟧.",
    "Order number 20231147 placed; for help call ⟦phone|0800 123 4567⟧.",
    "Invoice 2023-0042-117, tel ⟦phone|+49 30 901820⟧",
    "Your order 112-4456789-1234567 ships today. Support: ⟦phone|+1 206 555 0100⟧",
    "Tracking 9400 1000 0000 0000 0000 00, courier hotline ⟦phone|0044 20 7946 0000⟧",
    "WhatsApp: ⟦phone|+34 612 34 56 78⟧",
    "Tel.: ⟦phone|+43 (0)1 5880 1234⟧ Durchwahl 12",
    "Please ring me on ⟦phone|0412 345 678⟧ after six.",
    "Fax ⟦phone|02 9876 5432⟧",
    "Mobile: ⟦phone|+41 79 123 45 67⟧ / Office: ⟦phone|044 668 18 00⟧",
    "Reach me: ⟦phone|555.867.5309⟧ ext. 12 is the old one",
    "Phone ⟦phone|+81 3-1234-5678⟧ (Tokyo)",
    "Handy ⟦phone|0171 1234567⟧",
    "2024-05-17 ⟦phone|+44 161 496 0000⟧ called about order 55871234",
    # IPv4 and IPv6
    "Our host is ⟦ip|2a00:1450:4001:82b::200e⟧.",
    "Client ⟦ip|2607:f8b0:4005:80a:0:0:0:200e⟧ connected, then ⟦ip|81.2.69.160⟧ retried",
    "Blocked address: ⟦ip|185.199.108.153⟧:443 after 3 attempts",
    "mapped form ⟦ip|::ffff:81.2.69.142⟧ in the log",
    "ssh admin@⟦ip|93.184.216.34⟧",
    # cards, 12 to 19 digits, spaces or dashes
    "Maestro ⟦credit_card|6759 5260 1812⟧ and ⟦credit_card|501866131862⟧",
    "Card: ⟦credit_card|5555-5555-5555-4444⟧, exp 12/27, CVC 123",
    "Amex ⟦credit_card|3782 822463 10005⟧ or Diners ⟦credit_card|3056 930902 5904⟧",
    "Visa ⟦credit_card|4111 1111 1111 1111⟧ 12/25",
    "long Visa ⟦credit_card|4231948757491186257⟧, UnionPay ⟦credit_card|62079244026859959⟧",
    "Paid with ⟦credit_card|6011 7104 9746 5078⟧.",
    # IBANs
    "IBAN: ⟦iban|DE89 3704 0044 0532 0130 00⟧ (Commerzbank)",
    "Überweisung an ⟦iban|FR1420041010050500013M02606⟧ bitte",
    "Konto ⟦iban|NL91ABNA0417164300⟧ en ⟦iban|BE68 5390 0754 7034⟧.",
    "CH: ⟦iban|CH93 0076 2011 6238 5295 7⟧",
    # national ids
    "His SSN is ⟦national_id|536-22-1234⟧.",
    "SSN: ⟦national_id|536221234⟧",
    "NI number ⟦national_id|AB 12 34 56 C⟧ or ⟦national_id|AB123456C⟧",
    "Rentenversicherungsnummer ⟦national_id|65 170839 J 003⟧",
    "SV-Nummer: ⟦national_id|12010190M004⟧",
    "Numéro de sécurité sociale ⟦national_id|2 69 05 49 588 157 80⟧",
    "NIR ⟦national_id|185057800604830⟧",
    "DNI ⟦national_id|12345678Z⟧",
    "Codice fiscale: ⟦national_id|RSSMRA85T10A562S⟧",
    # emails, plain and obfuscated
    "Write to ⟦email|first.last+tag@sub.domain.co.uk⟧ or ⟦email|o'brien.kay@mail.ie⟧",
    "Kontakt: ⟦email|kontakt(at)firma-beispiel.de⟧",
    "mail ⟦email|jane.doe [at] mailhost [dot] org⟧ please",
    "reach ⟦email|john at mailhost dot com⟧ today",
    "<⟦email|ALICE@CORP.EXAMPLE-MAIL.NET⟧>",
    # secrets
    # a private-key block is a secret as a whole
    "key:\n⟦secret|-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAv3Lq\nZm9vYmFyYmF6cXV4\n"
    "-----END RSA PRIVATE KEY-----⟧\nend",
    "AWS_SECRET_ACCESS_KEY=⟦secret|Hq7ZpD2xVb9WmT4kLr8sN3cFyJ6gQ1eA0uRtBvCw⟧",
    "export GITHUB_TOKEN=⟦secret|ghp_Z8r2Kq9Lm3Np4Xv5Bt6Wc7Yd8Fg9Hj0Ks1Qa⟧",
    "slack bot ⟦secret|xoxb-2048-8192-Tq4Zr8Lw2Np6Vx0Bc3Md7Fk9H⟧",
    "Authorization: Bearer ⟦secret|eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVP⟧",
    '{"db_password": "⟦secret|Tr0ub4dor&3x⟧", "user": "app"}',
]
# Nothing in these is personal data or a secret: each must come out unchanged.
LOOKALIKES = [
    # versions
    "Upgrade to 1.2.3.4 or to 10.0.19041.1288 before Friday.",
    "Python 3.11.4, kernel 6.1.0-18-amd64, release v2.14.3.1, OID 1.3.6.1.4.1.2021",
    "version 4.19.0.12 fixes it; build 20240517.3",
    # dates and timestamps
    "Dates: 2024-05-17, 17.05.2024, 05/17/2024, 2024/05/17 14:32:10, 17 May 2024.",
    "Logged at 2024-05-17T14:32:10Z, 14:32:10.123, 20240517143210.",
    "timestamp 1715954730 and 1715954730123 epoch ms",
    "Between 1999-12-31 23:59:59 and 2000-01-01 00:00:01 nothing happened.",
    # prices and amounts
    "Total $1,299.99, € 1.234,56, 1 299,00 zł, USD 12,345,678.90, ¥ 1 234 567.",
    "Population 8 336 817; area 1 214,4 km2; 12.5% growth",
    # ISBNs
    "ISBN 978-3-16-148410-0 and ISBN 0-306-40615-2, ISBN-13 9780306406157",
    # hashes and ids
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit 3e4f1a2b9c7d, md5 d41d8cd98f00b204e9800998ecf8427e, id a1b2c3d",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    # order, invoice and tracking numbers
    "Order #123-4567890-1234567 and order no. 40281733 shipped.",
    "Invoice INV-2023-004512, PO 4500012345, ticket 2024051700123",
    "Tracking number 1Z999AA10123456784, reference 4111 1111 1111 1112",
    "Order 4111111111111111 was refunded.",  # a valid test card, but the word says order
    # numbers that fail a check
    "Cards: 4111 1111 1111 1112 (bad Luhn), 1234 5678 9012 3456",
    "SSNs that cannot be: 000-12-3456, 666-12-3456, 900-12-3456, 123-45-6789",
    "IBAN-like GB82 WEST 1234 5698 7654 33 and DE00 1234 5678 9012 3456 78",
    "Ranges 10.0.0.0/8 and 127.0.0.1 and 192.168.1.1 and ::1 and fe80::1 and 2001:db8::1",
    # code and markup
    "std::vector<int> a; a::b; x86_64; sha1sum; 0xffffffff81000000; 12:30:45",
    "MAC 00:1a:2b:3c:4d:5e, time 10:20:30:40",
    "icon@2x.png, @media screen, npm i @types/node, user@localhost, me@example.com",
    "password=<your password>, api_key: YOUR_API_KEY, token = ${GITHUB_TOKEN}",
    "key: value, primary_key=id, keyboard: us-international, -----BEGIN PUBLIC KEY-----",
    # plain numbers in prose
    "Table 1 2 3 4 5 6 7 8 9 10 and page 1234567 of the log",
    "The function call took 1234567 ns; the system call returned 4096.",
    "coordinates 48.8566, 2.3522; zip 94103-1234; PLZ 10115 Berlin",
    "Look at the dot product and at this site dot com later.",
]

# Written after the stage's rules were settled, as a check on cases they were not tuned on.
# Scored once as written: every type 100% except phone, 13/15; 0 false finds in
# HELD_OUT_LOOKALIKES. The two misses were then fixed (a last digit group glued to a word,
# `01632 960 001 (9am-5pm)`, and a zero-heavy freephone number, `0800 555 0100`), so these are
# NOT held out any more: bench/evals/pii_eval.py reports them as "old held-out", and no figure is
# claimed on them. The held-out sets the rules are never tuned against are the `HELD_OUT` part
# of tests/stages/pii/script_cases.py and, for phones, the `held_out_2` part of
# bench/data/pii/phone_held_out_2.jsonl (the `held_out` part has been tuned on since).
HELD_OUT = [
    "Kontaktieren Sie uns unter ⟦phone|+49 (0)89 1234 5678⟧ oder per Mail.",
    "Numéro: ⟦phone|04 72 12 34 56⟧",
    "For bookings ring ⟦phone|01632 960 001⟧ (9am-5pm).",
    "Call ⟦phone|212.555.0187⟧ before noon",
    "Tel: ⟦phone|+1 (646) 555-0143⟧",
    "Mobil: ⟦phone|0176/12345678⟧",
    "my cell is ⟦phone|555 0142⟧",
    "Invoice no. 4432198 - questions to our hotline ⟦phone|0800 555 0100⟧",
    "Order 88213345 will arrive Tuesday; call ⟦phone|+44 7700 900 461⟧ if not.",
    "Telefon ⟦phone|+43 1 234 56 78⟧",
    "Contact: ⟦phone|+61 2 9876 5432⟧",
    "Reach us on ⟦phone|(03) 9123 4567⟧.",
    "Whatsapp ⟦phone|+55 11 91234-5678⟧",
    "Teléfono: ⟦phone|+34 91 123 45 67⟧",
    "SMS ⟦phone|06-12345678⟧",
    "Connection from ⟦ip|203.0.114.7⟧ refused",
    "Peer ⟦ip|2001:41d0:8:e8ad::1⟧ timed out",
    "X-Forwarded-For: ⟦ip|77.88.55.60⟧, ⟦ip|198.51.99.4⟧",
    "ipv6 ⟦ip|2400:cb00:2048:1::c629:d7a2⟧ is cloud",
    "Charged to ⟦credit_card|5105 1051 0510 5100⟧.",
    "full number ⟦credit_card|378734493671000⟧",
    "JCB ⟦credit_card|3566-0020-2036-0505⟧",
    "Maestro card ⟦credit_card|676378778937⟧",
    "Discover ⟦credit_card|6011000990139424⟧",
    "Please pay into ⟦iban|ES91 2100 0418 4502 0005 1332⟧",
    "IBAN ⟦iban|IT60X0542811101000000123456⟧",
    "konto: ⟦iban|PL61 1090 1014 0000 0712 1981 2874⟧",
    "AT ⟦iban|AT611904300234573201⟧",
    "Social Security Number: ⟦national_id|078-05-1121⟧",
    "SSN ⟦national_id|219-09-9998⟧",
    "National Insurance number ⟦national_id|JG 10 37 56 A⟧",
    "DNI: ⟦national_id|87654321X⟧",
    "Sozialversicherungsnummer ⟦national_id|12 010190 M 004⟧",
    "⟦email|info@bäckerei-müller.de⟧",
    "Contact ⟦email|support (at) my-company (dot) io⟧",
    "Send CV to ⟦email|hr.team@corp.co.jp⟧.",
    "mailto:⟦email|press+2024@news.example-media.com⟧",
    "STRIPE_SECRET_KEY=⟦secret|sk_live_51HxYz2KlmN3opQ4rsT5uvW6⟧",
    "GOOGLE_API_KEY: ⟦secret|AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY⟧",
    "db.password = ⟦secret|pa55w0rd!2024⟧",
    "client_secret: ⟦secret|8f3kQ9zL2mX7vB4nW1pR6tY0⟧",
]
HELD_OUT_LOOKALIKES = [
    "Build 2024.05.17.1234 released",
    "Call stack: frame 0x00007ffd 1234567",
    "Serial number: 5CG1234XYZ, model 15-ef2126wm",
    "Coordinates: 40.7128 N, 74.0060 W",
    "Tracking: 1Z 999 AA1 01 2345 6784",
    "Between 10:00 and 12:30 on 01/02/2023",
    "Price: 1.299,00 € (incl. 19% VAT)",
    "Patent US 10,123,456 B2 granted 2019-11-12",
    "ISBN-10: 0-596-52068-9",
    "Revision r1234567 of file",
    "uuid: 550e8400-e29b-41d4-a716-446655440000",
    "Score 0.123456789",
    "Chapter 12.3.4.5 explains",
    "Hash: 5d41402abc4b2a76b9719d911017c592",
    "Rack 2 unit 14, port 3/0/12, VLAN 1234-1240",
    "Flight LH 400 on 2024-06-01 at 13:45, seat 32A, booking ref 7Y3K9P",
    "Account balance: 12 345 678,90 SEK",
]


# The synth development set's entity types (presidio-research's names) -> our types, for the
# types whose labels are independent of our rules (tests/stages/pii/test_stage.py and
# bench/evals/pii_eval.py).
SYNTH_LABELS = {
    "EMAIL_ADDRESS": "email",
    "PHONE_NUMBER": "phone",
    "IP_ADDRESS": "ip",
    "CREDIT_CARD": "credit_card",
    "IBAN_CODE": "iban",
    "US_SSN": "national_id",
}
