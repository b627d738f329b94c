"""The spaced copy: whitespace escapes read as spaces, nothing else moves."""

from __future__ import annotations

import random

import pytest

from abcd_daemon.scanner import spaced as spaced_mod
from abcd_daemon.scanner.spaced import ESCAPES, spaced


def _one_kind_at_a_time(buf: bytes) -> bytes:
    """The definition: each escape kind replaced in turn by as many spaces."""
    for esc in ESCAPES:
        buf = buf.replace(esc, b" " * len(esc))
    return buf


def test_whitespace_escapes_become_spaces_at_the_same_offsets():
    line = b'{"c":"$ cat creds\\nrubygems_x\\tKEY%20v%0Aw\\\\n"}\n%0d%09\\r'
    out = spaced(line)
    assert out == b'{"c":"$ cat creds  rubygems_x  KEY   v   w\\  "}\n        '
    assert len(out) == len(line) and out.count(b"\n") == line.count(b"\n")


def test_punctuation_escapes_and_plain_text_are_left_as_they_are():
    text = b'a%3Db \\u0041 \\" %2F plain'
    assert spaced(text) == text
    assert spaced(b"no escapes at all") is not None and spaced(b"") == b""


@pytest.mark.parametrize("with_vectorscan", [True, False])
def test_spaced_equals_replacing_each_escape_kind_in_turn(monkeypatch, with_vectorscan):
    if not with_vectorscan:
        monkeypatch.setattr(spaced_mod, "hyperscan", None)
    rng = random.Random(11)
    alphabet = b"\\%ntr20AaDd9x\n\" "
    for _ in range(4000):
        buf = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 48)))
        assert spaced(buf) == _one_kind_at_a_time(buf), buf


def test_the_read_tools_escaped_arrow_is_a_blank_so_a_token_opening_a_read_line_is_found(scanner):
    import json

    from abcd_daemon.scanner import redact_text

    assert spaced(b"     3\\u2192A3-X") == b"     3      A3-X"
    # Claude Code's Read result, as an encoder that escapes non-ASCII writes it:
    # the token after "3\u2192" had no word boundary for the ruleset's patterns.
    token = "A3-ASWWYB-798JRYLJVD4-QCSFA-8DDHB-KF7GZ"
    for ensure_ascii in (True, False):
        raw = json.dumps({"type": "tool_result", "content": f"     1\u2192# keys\n     3\u2192{token}\n"},
                         ensure_ascii=ensure_ascii).encode()
        assert token.encode() not in redact_text(scanner, raw).text
