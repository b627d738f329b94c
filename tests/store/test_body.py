"""Reading a record body back in bounded memory (store/body.py): every line as
``split`` gives it, across read blocks of any size; chunks byte for byte; the whole-body
read keeps its cap; an unreadable record is refused when it is opened."""

import random

import pytest

from abcd_daemon.errors import ReadRefused
from abcd_daemon.store import body as body_module
from abcd_daemon.store.body import body_of
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import Record, RecordFormatError, format_record, format_rfc3339_ns
from abcd_daemon.store.records import list_records

SHA = "e" * 40


@pytest.fixture
def lane(home):
    return Lane(home, SHA).ensure("records")


def put(lane, data: bytes, name="20260101T000000.000000001Z-s1.md"):
    rec = Record(session_id="s1", root_commit=SHA, source_sha256="0" * 64,
                 captured_at=format_rfc3339_ns(10**18))
    raw = format_record(rec, b"x\n")[:-2] + data  # the body exactly as given
    (lane.records / name).write_bytes(raw)
    [record] = list_records(lane)
    return record


def test_lines_are_the_bodys_split_across_every_block_size(lane, monkeypatch):
    rng = random.Random(16)
    for trial in range(150):
        parts = [b"x" * rng.choice([0, 1, 2, 5, 7, 15, 16, 17, 40]) for _ in range(rng.randint(0, 12))]
        data = b"\n".join(parts) + (b"\n" if rng.random() < 0.5 else b"")
        monkeypatch.setattr(body_module, "_BLOCK", rng.choice([1, 2, 3, 7, 16, 1 << 20]))
        for old in lane.records.iterdir():
            old.unlink()
        body = body_of(lane, put(lane, data))
        assert body.length == len(data)
        assert [bytes(line) for line in body.lines()] == data.split(b"\n"), (data, trial)
        assert b"".join(body.chunks(5)) == data
        assert [bytes(line) for line in body.lines()] == data.split(b"\n")  # again, from the start


def test_a_line_over_the_line_cap_is_one_unparseable_marker_not_held(lane, monkeypatch):
    monkeypatch.setattr(body_module, "_BLOCK", 4)
    monkeypatch.setattr(body_module, "LINE_CAP", 10)
    data = b"short\n" + b"y" * 25 + b"\n" + b"z" * 10 + b"\n" + b"w" * 11
    assert [bytes(x) for x in body_of(lane, put(lane, data)).lines()] == [
        b"short", b"\x00", b"z" * 10, b"\x00"]


def test_read_whole_keeps_its_cap_and_open_refuses_a_broken_record(lane, monkeypatch):
    record = put(lane, b"{}\n" * 10)
    assert body_of(lane, record).read() == b"{}\n" * 10
    monkeypatch.setattr(body_module, "TRANSCRIPT_CAP", 8)
    with pytest.raises(ReadRefused):
        body_of(lane, record).read()
    (lane.records / record.name).write_bytes(b"no frontmatter at all\n")
    with pytest.raises(RecordFormatError):
        body_of(lane, record)
    (lane.records / record.name).unlink()
    with pytest.raises(ReadRefused):
        body_of(lane, record)
