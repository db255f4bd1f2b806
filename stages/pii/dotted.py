"""Four numbers joined by dots, for the `pii` stage: an IPv4 address (`ipv4_at`), unless
`pii_numbers` reads it as a phone first (after a `+`, not an address, or an address's shape
next to a phone word and grouped as a national number: `NumberFinder._dotted_phone`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from gristmill.stages.pii import checks as ck
from gristmill.stages.pii.script import DIGIT, WORD
from gristmill.stages.pii.shapes import IP_WORDS, VERSION_BEFORE, netmask

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
IPV4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")
DOTTED4 = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?!\.?[0-9])")


def ipv4_at(
    text: str,
    s: int,
    e: int,
    emit: Callable[[int, int, str], None],
    on: bool,
    keep_ip,
    windows: list[tuple[int, int]],
) -> int:
    """Emit the IPv4 address at text[s:e] (four numbers with dots that no phone rule took) if it
    is one and `on`, and not in a range of `keep_ip`; return where the dotted run ends."""
    m = IPV4.match(text, s, e)
    dotted = DOTTED4.match(text, s, e)
    if m is None or m.end() != dotted.end():
        return dotted.end()  # 999.1.2.3 or 1.2.3.4.5: a version or an OID, not an address
    end = m.end()
    nxt = text[end] if end < len(text) else " "
    if nxt in WORD or nxt == "-" or (nxt == "." and text[end + 1 : end + 2] in DIGIT):
        return end
    if not on:
        return end
    addr = m.group()
    octets = [int(o) for o in addr.split(".")]
    head = text[max(0, s - 24) : s]
    windows.append((s - 24, s))
    if VERSION_BEFORE.search(head) or netmask(octets):
        return end
    if max(octets) < 32 and not IP_WORDS.search(head):
        return end  # 1.2.3.4, 3.2.18.6 with no word about addresses: a version, a section
    if nxt == "." and head[head.rfind("\n") + 1 :].strip() == "":
        return end  # `2.3.1.36. Arguments` at the start of a line: a section heading
    rng = ck.ip_range(ck.parse_ip(addr))
    if rng is None or rng not in keep_ip:
        emit(s, end, "ip")
    return end
