"""The record file format: schema-3 frontmatter, Go-corpus compatibility."""

import pytest

from abcd_daemon.store.record import (
    Record,
    RecordFormatError,
    compact_stamp,
    format_record,
    format_rfc3339_ns,
    parse_record,
    parse_rfc3339_ns,
    record_filename,
)

SHA = "a" * 40


def _record(**kw):
    base = dict(session_id="s-1", root_commit=SHA, source_sha256="b" * 64,
                captured_at="2026-01-01T00:00:00.5Z")
    base.update(kw)
    return Record(**base)


def test_lineage_round_trips_through_the_record():
    rec = _record(agent_id="a1234567", parent_agent_id="a7654321", agent_type="general-purpose",
                  spawn_depth=2, spawn_tool_use_id="toolu_01", lineage_source="hook",
                  spawn_attribution="sidecar", redacted_secrets=3, redacted_home_paths=1)
    back, body = parse_record(format_record(rec, b'{"a":1}'), "x.md")
    for field in ("agent_id", "parent_agent_id", "agent_type", "spawn_depth", "spawn_tool_use_id",
                  "lineage_source", "spawn_attribution", "redacted_secrets", "redacted_home_paths"):
        assert getattr(back, field) == getattr(rec, field)
    assert body == b'{"a":1}\n'


def test_frontmatter_order_and_fences_are_byte_exact():
    data = format_record(_record(agent_id="ag", spawn_attribution="unattributed"), b"x\n")
    assert data.startswith(b"---\nschema: 3\nsession_id: s-1\nroot_commit: ")
    keys = [line.split(b": ")[0] for line in data.split(b"\n---\n")[0].split(b"\n")[1:]]
    assert keys == [b"schema", b"session_id", b"root_commit", b"captured_at", b"source_kind",
                    b"source_sha256", b"redacted_secrets", b"redacted_home_paths", b"agent_id",
                    b"spawn_attribution"]


def test_schema_one_record_reads_as_main_thread():
    go = (b"---\nschema: 1\nsession_id: 5a9221e2\nroot_commit: " + SHA.encode() +
          b"\ncaptured_at: 2026-08-01T10:00:00.123456789Z\nsource_kind: native\n"
          b"source_sha256: " + b"c" * 64 + b"\nredacted_secrets: 2\nredacted_home_paths: 0\n---\n{}\n")
    rec, body = parse_record(go, "go.md")
    assert rec.is_main_thread and rec.schema == 1 and rec.agent_id == ""
    assert rec.redacted_secrets == 2 and body == b"{}\n"


def test_legacy_fused_import_kind_reads_as_route_and_tool():
    data = format_record(_record(), b"{}").replace(b"source_kind: native", b"source_kind: specstory-import")
    rec, _ = parse_record(data)
    assert (rec.source_kind, rec.source_tool) == ("import", "specstory")


@pytest.mark.parametrize("bad", [
    b"no fence\n",
    b"---\nsession_id: x\n",  # never closed
    b"+++\nsession_id: x\n+++\n",
])
def test_a_record_without_exact_fences_is_refused(bad):
    with pytest.raises(RecordFormatError):
        parse_record(bad)


def test_missing_required_field_is_refused():
    data = format_record(_record(), b"{}").replace(b"source_sha256: " + b"b" * 64 + b"\n", b"")
    with pytest.raises(RecordFormatError, match="required"):
        parse_record(data)


def test_unknown_keys_and_keyless_lines_are_ignored():
    data = format_record(_record(), b"{}").replace(b"schema: 3\n", b"schema: 3\nfuture_key: 1\njunk\n")
    rec, _ = parse_record(data)
    assert rec.session_id == "s-1"


def test_subagent_record_filename_names_the_agent():
    rec = _record(agent_id="acf07c33", captured_at=format_rfc3339_ns(1767225600_000000001))
    assert record_filename(rec) == "20260101T000000.000000001Z-s-1-agent-acf07c33.md"
    assert record_filename(_record(captured_at=rec.captured_at)) == "20260101T000000.000000001Z-s-1.md"


def test_times_round_trip_at_nanosecond_precision():
    for ns in (0, 1, 1767225600_123456789, 1767225600_100000000):
        assert parse_rfc3339_ns(format_rfc3339_ns(ns)) == ns
    assert len(compact_stamp(1767225600_5)) == 26
    assert parse_rfc3339_ns("2026-01-01T01:00:00+01:00") == 1767225600 * 10**9


def test_a_line_break_in_a_value_cannot_forge_a_frontmatter_line():
    with pytest.raises(RecordFormatError):
        format_record(_record(agent_type="x\nroot_commit: forged"), b"{}")
