"""IP addresses (`stages/pii/ip.py`): IPv4 and IPv6, the kept ranges, look-alikes."""

from tests.stages.pii.helpers import finds


def test_ip():
    assert finds("from 81.2.69.160 and 2a00:1450:4001:82b::200e") == [
        ("81.2.69.160", "ip"),
        ("2a00:1450:4001:82b::200e", "ip"),
    ]
    for text in ("127.0.0.1", "10.1.2.3", "192.168.0.1", "fe80::1", "2001:db8::5"):
        assert finds(f"host {text}") == [], text  # loopback, private, link-local, docs
    assert finds("version 4.19.0.12") == []
    assert finds("upgrade to 1.2.3.4") == []  # small octets and no word about hosts: a version
    assert finds("host 1.2.3.4") == [("1.2.3.4", "ip")]
    assert finds("netmask 255.255.255.0") == []
    assert finds("host 10.1.2.3", keep_ip_ranges=[]) == [("10.1.2.3", "ip")]
