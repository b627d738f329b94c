"""Values read from source fields (times, token counts) and the body spill's copy into
a file: the fast paths for the common shapes give what the general rules give."""

from __future__ import annotations

import os

import pytest

from abcd_daemon.reconstruct import values
from abcd_daemon.reconstruct.spill import Spill
from abcd_daemon.reconstruct.values import usage_of, when_key

#: (stamp, its key): what the general rules (RFC 3339, UTC, ranges checked) give.
TIMES = [
    ("2026-04-18T13:15:42.474Z", "2026-04-18T13:15:42.474000000"),
    ("2026-04-18T13:15:42.4Z", "2026-04-18T13:15:42.400000000"),
    ("2026-04-18T13:15:42.123456789Z", "2026-04-18T13:15:42.123456789"),
    ("2026-04-18T13:15:42.1234567890Z", ""),  # ten digits: no time
    ("2026-13-18T13:15:42.474Z", ""),  # month 13
    ("2026-04-18T24:15:42.474Z", ""),  # hour 24
    ("2026-04-18T13:15:60.5Z", "2026-04-18T13:15:60.500000000"),  # a leap second
    ("2026-04-18T13:15:42.4\u06634Z", "2026-04-18T13:15:42.4\u06634000000"),  # \d is Nd
    ("2026-04-18T13:15:42.Z", ""),
    ("2026-04-18T13:15:42.47aZ", ""),
    ("2026-04-18T13:15:42Z", "2026-04-18T13:15:42.000000000"),
    ("2026-04-18T13:15:42.474+02:00", "2026-04-18T11:15:42.474000000"),
    ("2026-04-18 13:15:42.474Z", ""),
]


@pytest.mark.parametrize("stamp,key", TIMES)
def test_a_time_key_does_not_depend_on_which_seconds_were_read_before(stamp, key):
    values._SECONDS.clear()
    assert when_key(stamp) == key  # its seconds not seen yet
    assert when_key(stamp) == key  # seen: remembered valid or not
    for other, _ in TIMES:  # whatever else was read in between
        when_key(other)
    assert when_key(stamp) == key


def test_a_bad_head_remembered_does_not_spoil_a_good_time_with_other_seconds():
    values._SECONDS.clear()
    assert when_key("2026-04-18T13:15:61.1Z") == ""
    assert when_key("2026-04-18T13:15:59.1Z") == "2026-04-18T13:15:59.100000000"
    assert when_key("2026-04-18T13:15:61.1Z") == ""


def test_the_remembered_seconds_stay_few_however_many_are_read():
    values._SECONDS.clear()
    for n in range(10_000):
        when_key(f"2026-04-18T{n // 3600 % 24:02}:{n // 60 % 60:02}:{n % 60:02}.5Z")
    assert len(values._SECONDS) <= 4096


@pytest.mark.parametrize("fields,usage", [
    ((1, 2, 3, 4), (1, 2, 3, 4)),
    ((0, 0, 0, 10**12), (0, 0, 0, 10**12)),
    ((-1, True, 2.5, 10**12 + 1), (0, 0, 2, 0)),  # negative, a bool, a float, too big
    ((None, "5", float("nan"), 7), (0, 0, 0, 7)),
])
def test_a_token_count_is_kept_when_it_is_a_count_and_reads_as_zero_otherwise(fields, usage):
    got = usage_of(*fields)
    assert got == usage and all(type(v) is int for v in got)


def test_a_body_copied_into_a_file_lands_after_its_head_and_the_file_writes_on_after_it(
        tmp_path):
    path = tmp_path / "artefact.md"
    text = "line\n" * 300_000 + "é\n"
    with open(path, "wb") as out:
        out.write(b"head\n")
        with Spill(tmp_path) as body:
            body.append(text)
            assert body.copy_to(out) == len(text.encode())
        assert out.tell() == 5 + len(text.encode())
        out.write(b"tail\n")
    assert path.read_bytes() == b"head\n" + text.encode() + b"tail\n"


def test_a_body_copied_into_a_pipe_arrives_whole(tmp_path):
    read, write = os.pipe()
    with os.fdopen(read, "rb") as r, os.fdopen(write, "wb") as w:
        with Spill(tmp_path) as body:
            body.append("piped\n")
            assert body.copy_to(w) == 6
        w.close()
        assert r.read() == b"piped\n"
