"""Network identifiers, detected by allow-list inversion (reference §3.2).

An example that means no host uses a reserved documentation value (RFC 5737/3849
addresses, RFC 7042 MACs, reserved names, persona hosts); everything else that
parses as an address is a finding. Private, LAN and CGNAT addresses are findings,
not exceptions. Each ``check_*`` predicate gets the buffer and the regex match and
returns True to keep the match; none raises.
"""

from __future__ import annotations

import ipaddress
import re

from .escapes import WORD, boundary_before

_V4_ALLOWED = tuple(
    ipaddress.ip_network(n)
    for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24",  # RFC 5737 documentation
              "169.254.0.0/16", "224.0.0.0/4", "198.18.0.0/15", "192.0.0.0/24",  # name no host
              "127.0.0.0/8", "0.0.0.0/32")
)
_V6_DOC = ipaddress.ip_network("2001:db8::/32")
_V6_NO_HOST = tuple(ipaddress.ip_network(n) for n in ("fe80::/10", "ff00::/8", "2001:2::/48"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
#: RFC 7042 documentation MACs: 00-00-5E-00-53-00 .. FF (unicast) and 90-00-... (multicast).
_DOC_MAC_PREFIXES = ("00005e0053", "90005e0053")
#: The persona registry's given names; a host derived from one is a fixture.
PERSONAS = frozenset("alice bob carol dave eve frank grace henry iris jack kira liam maya nia".split())
_NON_HOST_NAMES = frozenset({"work.local"})
# A host name whose first label reads as a code receiver is a selector, not a host.
_SELECTORS = frozenset(
    "this self window document process os config settings env options opts props state ctx context app "
    "module exports global globals cls obj data item node req res request response event e x".split()
)
# Words that make "<word>-laptop" a phrase about a kind of machine, not a host.
_COMMON = frozenset(
    "my your his her our their the a an new old work home personal gaming office company dev test example "
    "sample demo cheap best budget any some this that every each other docker ubuntu windows linux apple "
    "intel arm used refurbished student business".split()
)
_FILE_EXT = re.compile(rb"\.[A-Za-z0-9]")
_CIDR = re.compile(rb"/\d{1,3}(?![0-9])")


def allowed_ipv4(text: str) -> bool:
    """True for a value that may appear: not an address at all, reserved, or a netmask."""
    try:
        addr = ipaddress.IPv4Address(text)
    except ValueError:
        return True
    if any(addr in net for net in _V4_ALLOWED):
        return True
    v = int(addr)
    inv = ~v & 0xFFFFFFFF
    return (v >> 24) == 255 and inv & (inv + 1) == 0  # a contiguous netmask


def allowed_mac(text: str) -> bool:
    digits = re.sub(r"[^0-9a-fA-F]", "", text).lower()
    return digits.startswith(_DOC_MAC_PREFIXES)


def allowed_ipv6(text: str) -> bool:
    try:
        addr = ipaddress.IPv6Address(text)
    except ValueError:
        return True
    if addr.ipv4_mapped is not None:
        return allowed_ipv4(str(addr.ipv4_mapped))
    if addr in _NAT64:
        return allowed_ipv4(str(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)))
    if addr.is_loopback or addr.is_unspecified or addr in _V6_DOC:
        return True
    if any(addr in net for net in _V6_NO_HOST):
        iid = addr.packed[8:]
        if iid[3:5] == b"\xff\xfe":  # EUI-64: judged as the MAC it embeds
            mac = bytes([iid[0] ^ 0x02]) + iid[1:3] + iid[5:8]
            return allowed_mac(mac.hex())
        return True
    return False


def _longer_run(buf: bytes, start: int, end: int, seps: bytes, digits: frozenset[int]) -> bool:
    """The match continues a longer run of separator-joined groups on either side."""
    if start >= 1 and buf[start - 1] in digits:
        return True
    if start >= 2 and buf[start - 1] in seps and buf[start - 2] in digits:
        return True
    if end < len(buf) and buf[end] in digits:
        return True
    return end + 1 < len(buf) and buf[end] in seps and buf[end + 1] in digits


_DEC = frozenset(b"0123456789")
_HEXD = frozenset(b"0123456789abcdefABCDEF")


def check_ipv4(buf: bytes, m: re.Match[bytes], ctx) -> bool:
    s, e = m.span()
    if not boundary_before(buf, s, WORD) or _longer_run(buf, s, e, b".", _DEC):
        return False
    if _CIDR.match(buf, e):
        return False  # a prefix declaration names a network, not a host
    return not allowed_ipv4(m.group().decode("ascii"))


def check_ipv6(buf: bytes, m: re.Match[bytes], ctx) -> bool:
    s, e = m.span()
    if not boundary_before(buf, s, WORD) or _longer_run(buf, s, e, b":", _HEXD):
        return False
    if e < len(buf) and buf[e] in WORD:
        return False
    if _CIDR.match(buf, e):
        return False
    text = m.group()
    colons = text.count(b":")
    if b"::" not in text and colons != 7 and not (colons == 6 and b"." in text):
        return False  # not an address (a clock time, a ratio): no parse needed
    return not allowed_ipv6(text.decode("ascii"))


def check_mac(buf: bytes, m: re.Match[bytes], ctx) -> bool:
    s, e = m.span()
    if not boundary_before(buf, s, WORD) or _longer_run(buf, s, e, b":-", _HEXD):
        return False
    return not allowed_mac(m.group().decode("ascii"))


def _persona_host(name: str) -> bool:
    first = name.lower().split(".", 1)[0]
    return first.split("-", 1)[0] in PERSONAS and first == first.lower() and "'" not in first


def check_lan_host(buf: bytes, m: re.Match[bytes], ctx) -> bool:
    s, e = m.span()
    if s >= 1 and buf[s - 1] in b"./\\$@-_" and buf[s - 2 : s] not in (b"\\n", b"\\t", b"//"):
        return False  # a dotted file name (.env.local), a path, a variable; not a URL's host
    if e < len(buf) and (buf[e] in WORD or buf[e] in b"-(" or _FILE_EXT.match(buf, e)):
        return False  # continues: settings.local.json, the.language, x.local()
    text = m.group().decode("ascii", "replace")
    labels = text.split(".")
    if text.lower() in _NON_HOST_NAMES or _persona_host(text):
        return False
    if labels[0].lower() in _SELECTORS:
        return False
    return not any(re.search(r"[a-z][A-Z]", lab) for lab in labels)  # camelCase selector


def check_device_host(buf: bytes, m: re.Match[bytes], ctx) -> bool:
    s, e = m.span()
    if not boundary_before(buf, s, WORD) or (e < len(buf) and buf[e] in WORD):
        return False
    text = m.group().decode("ascii", "replace")
    if _persona_host(text):
        return False
    words = text.lower().split("-")[:-1]
    return not any(w in _COMMON for w in words)


__all__ = ["PERSONAS", "allowed_ipv4", "allowed_ipv6", "allowed_mac",
           "check_device_host", "check_ipv4", "check_ipv6", "check_lan_host", "check_mac"]
