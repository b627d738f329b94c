"""The JSON check of the guard: a full decode's answer, without building the document."""

from __future__ import annotations

import msgspec
import pytest

from abcd_daemon.scanner import jsonline
from abcd_daemon.scanner.jsonline import is_json


def _decodes(line: bytes) -> bool:
    try:
        msgspec.json.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    return True


BROKEN = [b'{"a": [1, 2', b'{"a": tru}', b'{"a": "x\\q"}', b'{"a": "\xff"}', b'{"a": "\xe2\x82"}',
          b'{"a":1} x', b'"\\udc00x"', b"[" * 5000 + b"]" * 5000, b'"a\x01b"', b"", b"nan"]
GOOD = [b'{"a": "\xe2\x82\xac"}', b'"\\ud83d\\ude00"', b"[1, 2.5, null, true]", b'{"a":"x"} ']


@pytest.mark.parametrize("line", BROKEN + GOOD)
def test_it_agrees_with_a_full_decode(line):
    assert is_json(line) is _decodes(line)
    assert is_json(memoryview(line)) is _decodes(line)


def test_real_transcript_lines_and_their_truncations_agree(fixtures_dir):
    path = sorted(fixtures_dir.glob("real_projects/*/*.jsonl"))[0]
    for line in path.read_bytes().splitlines()[:200]:
        assert is_json(line) and _decodes(line)
        cut = line[: len(line) // 2]
        assert is_json(cut) is _decodes(cut)


def test_a_long_line_is_checked_in_pieces_whose_cuts_split_characters(monkeypatch):
    monkeypatch.setattr(jsonline, "STEP", 7)
    line = ('{"k": "' + "é€😀x" * 400 + '"}').encode()
    assert is_json(line)
    assert not is_json(line[:-5] + b"\xe2\x82" + line[-3:])
    assert not is_json(line[:-2])
