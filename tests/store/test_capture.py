"""Capture: the one path that writes a record — idempotent, superseding, fail-closed."""

from __future__ import annotations

import os
import stat

import pytest

from abcd_daemon.config import Config
from abcd_daemon.errors import DegradedScanner, InputError, RedactionResidual
from abcd_daemon.scanner import Identity, build_scanner
from abcd_daemon.store.capture import capture
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.meta import CaptureMeta
from abcd_daemon.store.records import list_records, read_body

SHA = "c" * 40
T0 = 1_767_225_600 * 10**9
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O50Zb5Hm"
LINE = b'{"type":"user","message":{"role":"user","content":"hello"}}\n'
#: An addition whose regex still matches its own masked output (first 3 / last 2 kept):
#: the fail-closed stage two must refuse it.
from ..conftest import NEVER_CONVERGES as SELF_MATCHING


@pytest.fixture
def scanner(tmp_path):
    return build_scanner(Identity(home=str(tmp_path / "home-of-me"), user="home-of-me"))


@pytest.fixture
def lane(home):
    return Lane(home, SHA)


def sub(agent, **kw):
    kw.setdefault("spawn_attribution", "unattributed")
    return CaptureMeta(session_id="sess", agent_id=agent, lineage_source="hook", **kw)


def cap(lane, raw, meta, scanner, ns=T0):
    return capture(lane, raw, meta, scanner=scanner, config=Config(), now_ns=ns)


def test_capture_writes_the_record_owner_only_and_redacted(lane, scanner):
    raw = b'{"type":"user","message":{"content":"token ' + TOKEN.encode() + b'"}}\n'
    result = cap(lane, raw, CaptureMeta(session_id="sess"), scanner)
    assert result.wrote
    path = lane.records / result.record.name
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    body = read_body(lane, result.record)
    assert TOKEN.encode() not in body and b"ghp" in body  # masked, not dropped
    assert result.record.redacted_secrets >= 1


def test_capture_idempotent_on_source_sha(lane, scanner):
    first = cap(lane, LINE, CaptureMeta(session_id="sess"), scanner)
    mtime = os.stat(lane.records / first.record.name).st_mtime_ns
    again = cap(lane, LINE, CaptureMeta(session_id="sess"), scanner, ns=T0 + 10**9)
    assert not again.wrote and again.record.name == first.record.name
    assert len(list_records(lane)) == 1
    assert os.stat(lane.records / first.record.name).st_mtime_ns == mtime


def test_identical_source_distinct_sessions_writes_both(lane, scanner):
    cap(lane, LINE, CaptureMeta(session_id="one"), scanner)
    cap(lane, LINE, CaptureMeta(session_id="two"), scanner, ns=T0 + 1)
    assert len(list_records(lane)) == 2


def test_two_subagents_with_identical_bytes_both_store(lane, scanner):
    a = cap(lane, LINE, sub("agent-a"), scanner)
    b = cap(lane, LINE, sub("agent-b"), scanner, ns=T0 + 1)
    assert a.wrote and b.wrote
    assert sorted(r.agent_id for r in list_records(lane)) == ["agent-a", "agent-b"]


def test_divergent_transcripts_for_one_agent_both_store(lane, scanner):
    cap(lane, LINE + b'{"n":1}\n', sub("a1"), scanner)
    cap(lane, LINE + b'{"n":2}\n', sub("a1"), scanner, ns=T0 + 1)
    assert len(list_records(lane)) == 2


def test_a_second_stop_supersedes_the_first_record(lane, scanner):
    first = cap(lane, LINE, sub("a1"), scanner)
    second = cap(lane, LINE + b'{"n":2}\n', sub("a1"), scanner, ns=T0 + 1)
    assert second.wrote and second.superseded == [first.record.name]
    [only] = list_records(lane)
    assert only.name == second.record.name
    assert read_body(lane, only) == LINE + b'{"n":2}\n'


def test_the_main_thread_spine_is_superseded_too(lane, scanner):
    cap(lane, LINE, CaptureMeta(session_id="sess"), scanner)
    cap(lane, LINE + LINE, CaptureMeta(session_id="sess"), scanner, ns=T0 + 1)
    assert len(list_records(lane)) == 1


def test_a_shorter_rearrival_does_not_write_a_second_record(lane, scanner):
    long = cap(lane, LINE + b'{"n":2}\n', sub("a1"), scanner)
    short = cap(lane, LINE, sub("a1"), scanner, ns=T0 + 1)
    assert not short.wrote and short.record.name == long.record.name
    assert len(list_records(lane)) == 1


def test_lineage_fields_are_redacted_with_the_body(lane, scanner):
    meta = sub("a1", agent_type="reviewer for jane.doe@corp-mail.com")
    result = cap(lane, LINE, meta, scanner)
    assert "jane.doe@corp-mail.com" not in result.record.agent_type
    assert "[redacted-email]" in result.record.agent_type
    data = (lane.records / result.record.name).read_bytes()
    assert b"jane.doe@corp-mail.com" not in data


def test_a_blocking_span_in_agent_type_refuses_the_write(home, lane):
    scanner = build_scanner(Identity(home="/nonexistent-home", user="nobody-here"), [SELF_MATCHING])
    assert not scanner.degraded
    with pytest.raises(RedactionResidual) as err:
        cap(lane, LINE, sub("a1", agent_type="abcdefghijklmnopQQ"), scanner)
    assert "abcdefghijklmnop" not in str(err.value)
    assert list_records(lane) == []


def test_a_degraded_scanner_refuses_every_capture(home, lane):
    scanner = build_scanner(Identity(home="/nonexistent-home", user="nobody-here"),
                            [{"name": "broken", "severity": "hard_fail", "keywords": ["x"], "regex": "("}])
    assert scanner.degraded
    for meta in (CaptureMeta(session_id="sess"), sub("a1")):
        with pytest.raises(DegradedScanner):
            cap(lane, LINE, meta, scanner)
    assert list_records(lane) == []


def test_no_unredacted_byte_of_a_planted_secret_survives_a_refused_capture(home, lane):
    scanner = build_scanner(Identity(home="/nonexistent-home", user="nobody-here"), [SELF_MATCHING])
    raw = b'{"t":"' + TOKEN.encode() + b' abcdefghijklmnopQQ"}\n'
    with pytest.raises(RedactionResidual):
        cap(lane, raw, CaptureMeta(session_id="sess"), scanner)
    for root, _, files in os.walk(home.root):
        for name in files:
            data = open(os.path.join(root, name), "rb").read()
            assert TOKEN.encode() not in data and b"abcdefghijklmnopQQ" not in data


def test_capture_rejects_bad_input_writing_nothing(lane, scanner):
    with pytest.raises(InputError, match="empty"):
        cap(lane, b"", CaptureMeta(session_id="sess"), scanner)
    with pytest.raises(InputError):
        cap(lane, LINE, CaptureMeta(session_id="a/b"), scanner)
    with pytest.raises(InputError):
        cap(lane, LINE, sub("a1", agent_type="x\ny"), scanner)
    assert list_records(lane) == []


def test_invalid_utf8_and_nul_bytes_store_without_crashing(lane, scanner):
    raw = b'\xff\xfe{"a": "\x00\x01"}\n' + b"\x80" * 100 + b"\n"
    result = cap(lane, raw, CaptureMeta(session_id="sess"), scanner)
    assert read_body(lane, result.record) == raw


def test_capture_accepts_a_sha256_root_key(home, scanner):
    lane = Lane(home, "f" * 64)
    assert cap(lane, LINE, CaptureMeta(session_id="sess"), scanner).wrote
