"""Listing and resolving records: newest first, skipping the unreadable."""

import os

import pytest

from abcd_daemon.errors import NotFoundError
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename
from abcd_daemon.store.records import list_for_session, list_records, read_body, resolve

SHA = "d" * 40


def put(lane, ns, session, agent="", body=b"{}\n"):
    rec = Record(session_id=session, root_commit=SHA, source_sha256=str(ns).rjust(64, "0"),
                 captured_at=format_rfc3339_ns(ns), agent_id=agent,
                 spawn_attribution="unattributed" if agent else "")
    name = record_filename(rec)
    (lane.records / name).write_bytes(format_record(rec, body))
    return name


@pytest.fixture
def lane(home):
    return Lane(home, SHA).ensure("records")


def test_list_absent_corpus_is_clean_empty(home):
    assert list_records(Lane(home, SHA)) == []


def test_list_is_newest_first(lane):
    a = put(lane, 10**18, "s1")
    b = put(lane, 3 * 10**18, "s2")
    c = put(lane, 2 * 10**18, "s3")
    assert [r.name for r in list_records(lane)] == [b, c, a]


def test_list_skips_symlinked_and_corrupt_records(lane, tmp_path):
    good = put(lane, 10**18, "s1")
    outside = tmp_path / "outside.md"
    outside.write_bytes(format_record(Record(session_id="evil", root_commit=SHA, source_sha256="0" * 64), b"x"))
    os.symlink(outside, lane.records / "20990101T000000.000000000Z-evil.md")
    (lane.records / "20990101T000000.000000000Z-bad.md").write_bytes(b"garbage")
    os.mkfifo(lane.records / "20990101T000000.000000000Z-fifo.md")
    assert [r.name for r in list_records(lane)] == [good]


def test_read_resolves_filename_then_agent_then_session(lane):
    main_old = put(lane, 1 * 10**18, "sess")
    main_new = put(lane, 2 * 10**18, "sess")
    agent = put(lane, 3 * 10**18, "sess", agent="sess")  # an agent whose id equals the session id
    other = put(lane, 4 * 10**18, "other", agent="a1")
    assert resolve(lane, main_old).name == main_old
    assert resolve(lane, "a1").name == other
    assert resolve(lane, "sess").name == agent  # agent id beats session id
    assert resolve(lane, "other").name == other  # any record of the session when no main thread
    os.unlink(lane.records / agent)
    assert resolve(lane, "sess").name == main_new
    with pytest.raises(NotFoundError, match="no record"):
        resolve(lane, "missing")


def test_list_for_session_returns_main_thread_and_every_subagent(lane):
    a1 = put(lane, 3 * 10**18, "s", agent="a1")
    main = put(lane, 1 * 10**18, "s")
    a2 = put(lane, 2 * 10**18, "s", agent="a2")
    put(lane, 5 * 10**18, "unrelated")
    assert [r.name for r in list_for_session(lane, "s")] == [main, a1, a2]


def test_body_bytes_and_body_read_agree(lane):
    name = put(lane, 10**18, "s", body=b'{"x": 1}\n{"y": 2}\n')
    rec = list_records(lane)[0]
    assert rec.name == name and rec.body_bytes == len(b'{"x": 1}\n{"y": 2}\n')
    assert read_body(lane, rec) == b'{"x": 1}\n{"y": 2}\n'
