"""A hook payload's lineage outranks the file's, whichever reached the store first
(store/lineage.py): capture keeps it, upgrades to it and relabels for it."""

from __future__ import annotations

import pytest

from abcd_daemon.config import Config
from abcd_daemon.scanner import Identity, build_scanner
from abcd_daemon.store.capture import capture
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.lineage import prefer_hook
from abcd_daemon.store.meta import CaptureMeta
from abcd_daemon.store.records import list_records, read_body

SHA = "f" * 40
T0 = 1_767_225_600 * 10**9
SHORT = b'{"type":"user","message":{"content":"look"}}\n'
LONGER = SHORT + b'{"type":"assistant","message":{"content":"found it"}}\n'
HOOK = CaptureMeta(session_id="sess", agent_id="a1b2c3d4", agent_type="Explore",
                   lineage_source="hook", spawn_attribution="sidecar", spawn_depth=1,
                   parent_agent_id="a9f9f9f9", spawn_tool_use_id="toolu_1")
FILE = CaptureMeta(session_id="sess", agent_id="a1b2c3d4", agent_type="general-purpose",
                   lineage_source="ingest", spawn_attribution="unattributed")


@pytest.fixture
def scanner(tmp_path):
    return build_scanner(Identity(home=str(tmp_path / "home-of-me"), user="home-of-me"))


@pytest.fixture
def lane(home):
    return Lane(home, SHA)


def cap(lane, raw, meta, scanner, ns):
    return capture(lane, raw, meta, scanner=scanner, config=Config(), now_ns=ns)


def only(lane):
    [record] = list_records(lane)
    return record


def lineage(record):
    return (record.lineage_source, record.agent_type, record.spawn_attribution,
            record.spawn_depth, record.parent_agent_id, record.spawn_tool_use_id)


HOOK_LINEAGE = ("hook", "Explore", "sidecar", 1, "a9f9f9f9", "toolu_1")


def test_a_hook_capture_of_bytes_already_stored_from_the_file_replaces_that_record(lane, scanner):
    first = cap(lane, LONGER, FILE, scanner, T0)
    again = cap(lane, LONGER, HOOK, scanner, T0 + 1)
    assert again.wrote and again.superseded == [first.record.name]
    record = only(lane)
    assert lineage(record) == HOOK_LINEAGE
    assert record.source_sha256 == first.record.source_sha256
    assert read_body(lane, record) == LONGER


def test_a_hook_capture_covered_by_a_longer_record_from_the_file_relabels_it(lane, scanner):
    """The hook copied the transcript before its last line landed; the watcher stored
    the whole file first: the longer body is kept, under the payload's lineage."""
    first = cap(lane, LONGER, FILE, scanner, T0)
    again = cap(lane, SHORT, HOOK, scanner, T0 + 1)
    assert again.wrote and again.superseded == [first.record.name]
    record = only(lane)
    assert lineage(record) == HOOK_LINEAGE
    assert read_body(lane, record) == LONGER
    assert record.source_sha256 == first.record.source_sha256  # the bytes the body came from


def test_a_file_capture_extending_a_hook_record_keeps_the_hook_lineage(lane, scanner):
    first = cap(lane, SHORT, HOOK, scanner, T0)
    grown = cap(lane, LONGER, FILE, scanner, T0 + 1)
    assert grown.wrote and grown.superseded == [first.record.name]
    assert lineage(only(lane)) == HOOK_LINEAGE


def test_the_file_s_capture_of_a_hook_record_s_bytes_writes_nothing(lane, scanner):
    first = cap(lane, LONGER, HOOK, scanner, T0)
    assert not cap(lane, LONGER, FILE, scanner, T0 + 1).wrote
    assert not cap(lane, SHORT, FILE, scanner, T0 + 2).wrote
    assert only(lane).name == first.record.name


def test_a_hook_capture_over_a_hook_record_stays_idempotent(lane, scanner):
    first = cap(lane, LONGER, HOOK, scanner, T0)
    assert not cap(lane, LONGER, HOOK, scanner, T0 + 1).wrote
    assert not cap(lane, SHORT, HOOK, scanner, T0 + 2).wrote
    assert only(lane).name == first.record.name


def test_prefer_hook_takes_only_a_hook_lineage_of_the_same_agent():
    assert prefer_hook(FILE, HOOK).lineage_source == "hook"
    assert prefer_hook(FILE, None) is FILE
    assert prefer_hook(HOOK, FILE) is HOOK  # a hook's own lineage is never replaced
    other = CaptureMeta(session_id="sess", agent_id="a0000000", lineage_source="hook",
                        spawn_attribution="unattributed")
    assert prefer_hook(FILE, other) is FILE
    masked = CaptureMeta(session_id="sess", agent_id="a1b2c3d4", lineage_source="hook",
                         spawn_attribution="sidecar", parent_agent_id="a*b*")  # redacted id
    assert prefer_hook(FILE, masked) is FILE
