"""IP addresses, for the `pii` stage: IPv4 (four numbers with dots that no phone rule took) and
IPv6 (from two colons), parsed; the ranges that identify no person (`IP_RANGES`) are kept when
the stage's `keep_ip_ranges` names them. Versions, section numbers, netmasks, OIDs, times, MAC
addresses and `std::vector` look alike and are not addresses."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

from gristmill.stages.pii.script import DIGIT, WORD

Emit = Callable[[int, int, str], None]

# Address ranges that identify no person: the stage keeps the ones named in `keep_ip_ranges`.
IP_RANGES: dict[str, tuple[str, ...]] = {
    "loopback": ("127.0.0.0/8", "::1/128"),
    "unspecified": ("0.0.0.0/32", "::/128"),
    "private": ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"),
    "link_local": ("169.254.0.0/16", "fe80::/10"),
    "documentation": (
        "192.0.2.0/24",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "2001:db8::/32",
        "3fff::/20",
    ),
    "multicast": ("224.0.0.0/4", "ff00::/8"),
    "broadcast": ("255.255.255.255/32",),
}
_NETS = {k: tuple(ipaddress.ip_network(n) for n in v) for k, v in IP_RANGES.items()}


def parse_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def ip_range(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """The name of the special range `addr` is in, or None for an ordinary (global) address."""
    for name, nets in _NETS.items():
        for net in nets:
            if addr.version == net.version and addr in net:
                return name
    return None


# -- IPv4 ----------------------------------------------------------------------------------

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
IPV4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")
DOTTED4 = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?!\.?[0-9])")
IP_WORDS = re.compile(
    r"(?i)\b(?:ip|ipv4|address|addr|host|server|dns|gateway|client|src|dst|via|inet|nameserver|"
    r"ping)\W*$"
)
VERSION_BEFORE = re.compile(
    r"(?i)(?<![a-z])(?:version|ver|v|release|rel|build|kernel|firmware|fw|update|upgrade|"
    r"patch|python|linux|libc|gcc|openssl|node|java|section|sections|chapter|sec|§)[\s.:=-]*$"
)


def netmask(octets: list[int]) -> bool:
    """255.255.255.0 and the like: ones then zeros; a mask, not anyone's address."""
    value = int.from_bytes(bytes(octets), "big")
    inverted = ~value & 0xFFFFFFFF
    return octets[0] == 255 and inverted & (inverted + 1) == 0


def ipv4_at(
    text: str, s: int, e: int, emit: Emit, on: bool, keep_ip, windows: list[tuple[int, int]]
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
    rng = ip_range(parse_ip(addr))
    if rng is None or rng not in keep_ip:
        emit(s, end, "ip")
    return end


# -- IPv6 ----------------------------------------------------------------------------------

# Two colons with at most 4 hex digits between: `::` or `:db8:`. Times (12:30:45) and MAC
# addresses (00:1a:2b:...) match too and fail the address parser.
COLONS = re.compile(r":[0-9A-Fa-f]{0,4}:")
HEX = frozenset("0123456789abcdefABCDEF")
V6_CHARS = HEX | {":", "."}


def _v6_extent(text: str, m: re.Match) -> tuple[int, int, int]:
    """(start, end, how far was read) of the address-like run around the colons of `m`, less
    the sentence's punctuation around it."""
    s = m.start()
    while s > 0 and text[s - 1] in V6_CHARS and m.start() - s < 40:
        s -= 1
    e = m.end()
    while e < len(text) and text[e] in V6_CHARS and e - s < 46:
        e += 1
    done = e
    while e > s and (text[e - 1] == "." or (text[e - 1] == ":" and text[e - 2 : e] != "::")):
        e -= 1  # sentence punctuation after the address
    while s < e and (text[s] == "." or (text[s] == ":" and text[s : s + 2] != "::")):
        s += 1
    return s, e, done


def _v6_shape(value: str) -> bool:
    """Written as an address, not as code (`a::1`) or netstat's loopback and port (`::1:25`)."""
    if value.count(":") < 2 or not any(c.isdigit() for c in value):
        return False
    groups = [g for g in value.split(":") if g]
    if len(groups) < 4 and not any(len(g) >= 3 for g in groups):
        return False
    return not (value.startswith("::") and len(groups) <= 2 and "." not in value)


def find_ipv6(text: str, emit: Emit, keep: frozenset[str]) -> None:
    done = 0
    for m in COLONS.finditer(text):
        if m.start() < done:
            continue
        s, e, done = _v6_extent(text, m)
        if (s and text[s - 1] in WORD) or (e < len(text) and text[e] in WORD):
            continue  # std::vector, a::b, 12ab:cd:...
        value = text[s:e]
        if not _v6_shape(value):
            continue
        addr = parse_ip(value)
        if addr is None or addr.version != 6:
            continue
        rng = ip_range(addr.ipv4_mapped or addr)  # ::ffff:127.0.0.1 is a loopback address
        if rng is None or rng not in keep:
            emit(s, e, "ip")
