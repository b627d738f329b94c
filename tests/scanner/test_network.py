"""Network identifiers and their documentation allow-lists (reference §3.2)."""

from __future__ import annotations

import pytest

from abcd_daemon.errors import RedactionResidual
from abcd_daemon.scanner import redact_text
from abcd_daemon.scanner.network import allowed_ipv4, allowed_ipv6, allowed_mac
from abcd_daemon.scanner.pipeline import verify


@pytest.mark.parametrize(
    "text",
    ["192.0.2.1", "198.51.100.200", "203.0.113.9", "127.0.0.1", "0.0.0.0", "255.255.255.0", "169.254.1.1",
     "224.0.0.251", "2001:db8::1", "2001:db8:85a3::8a2e:370:7334", "::1", "fe80::1", "ff02::1",
     "::ffff:192.0.2.1", "00:00:5E:00:53:01", "version 1.2.3", "at 10:22:33.123", "std::vector<int>"],
)
def test_documentation_and_non_host_values_are_not_redacted(scanner, text):
    raw = f"seen {text} here".encode()
    assert redact_text(scanner, raw).text == raw


@pytest.mark.parametrize(
    "text, placeholder",
    [("8.8.8.8", b"[redacted-address]"), ("10.1.2.3", b"[redacted-address]"), ("100.64.1.2", b"[redacted-address]"),
     ("2a01:4f8:c17:b8f::2", b"[redacted-address]"), ("fd12:3456:789a::1", b"[redacted-address]"),
     ("::ffff:10.1.2.3", b"[redacted-address]"), ("3c:22:fb:1a:2b:3c", b"[redacted-mac]"),
     ("3C-22-FB-1A-2B-3C", b"[redacted-mac]"), ("nas-01.local", b"[redacted-hostname]"),
     ("dain-macbook", b"[redacted-hostname]")],
)
def test_real_addresses_and_hosts_are_redacted(scanner, text, placeholder):
    out = redact_text(scanner, f"seen {text} here".encode())
    assert out.text == b"seen " + placeholder + b" here"
    assert out.secrets == 1


def test_an_address_inside_a_longer_dotted_run_or_a_cidr_is_not_a_host(scanner):
    raw = b"oid 1.3.6.1.4.1.311 route 10.0.0.0/8 ip6 2a01:4f8::/32"
    assert redact_text(scanner, raw).text == raw


def test_allow_list_predicates():
    assert allowed_ipv4("198.51.100.3") and not allowed_ipv4("93.184.216.34")
    assert allowed_ipv4("999.1.1.1")  # not an address at all
    assert allowed_ipv6("2001:db8::") and not allowed_ipv6("2606:4700::1111")
    assert allowed_ipv6("64:ff9b::c000:201") and not allowed_ipv6("64:ff9b::a01:203")  # judged by embedded v4
    assert not allowed_ipv6("fe80::3e22:fbff:fe1a:2b3c")  # EUI-64 judged as the MAC it embeds
    assert allowed_mac("00-00-5e-00-53-ff") and not allowed_mac("3c:22:fb:1a:2b:3c")


def test_a_surviving_warn_level_hostname_still_blocks_in_stage_two(scanner):
    text = b"ping printer.lan now"
    with pytest.raises(RedactionResidual) as err:
        verify(scanner, text, [(0, len(text))])
    assert err.value.kinds == ["net:lan_hostname"]
    assert b"printer" not in str(err.value).encode()
