"""An existing corpus of the Go system reads in place (records schema 1-3), and ingest
recognises what it already holds."""

import hashlib
import json

from abcd_daemon.ingest.run import ingest
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import parse_record
from abcd_daemon.store.records import list_for_session, list_records

from ..conftest import make_repo
from .conftest import T0, claude_line, write_jsonl


def go_record(*, schema: int, session: str, root: str, body: str, sha256: str = "",
              kind: str = "native", agent: str = "", extra: str = "") -> bytes:
    """A record as the Go system wrote it, for its schema: 1 base fields; 2 lineage;
    3 adopted_project."""
    lines = [f"schema: {schema}", f"session_id: {session}", f"root_commit: {root}",
             "captured_at: 2026-01-02T03:04:05.123456789Z", f"source_kind: {kind}",
             f"source_sha256: {sha256 or hashlib.sha256(body.encode()).hexdigest()}",
             "redacted_secrets: 2", "redacted_home_paths: 1"]
    if schema >= 2 and agent:
        lines += [f"agent_id: {agent}", "agent_type: Explore", "lineage_source: migrated",
                  "spawn_attribution: unattributed"]
    if schema >= 3:
        lines.append("adopted_project: old-proj")
    lines += [x for x in extra.split("\n") if x]
    return ("---\n" + "\n".join(lines) + "\n---\n" + body).encode()


ROOT = "d" * 40


def test_a_schema_1_record_reads_as_a_main_thread_with_empty_lineage():
    rec, body = parse_record(go_record(schema=1, session="s1", root=ROOT, body="x\n"), "r.md")
    assert (rec.schema, rec.session_id, rec.agent_id, rec.lineage_source) == (1, "s1", "", "")
    assert rec.is_main_thread and body == b"x\n" and rec.redacted_secrets == 2


def test_a_schema_2_record_keeps_its_lineage():
    rec, _ = parse_record(go_record(schema=2, session="s1", root=ROOT, body="x\n", agent="a1"))
    assert (rec.agent_id, rec.agent_type, rec.lineage_source, rec.spawn_attribution) == (
        "a1", "Explore", "migrated", "unattributed")


def test_a_schema_3_record_keeps_its_adopted_project_and_spawn_depth():
    rec, _ = parse_record(go_record(schema=3, session="s1", root=ROOT, body="x\n", agent="a1",
                                    extra="parent_agent_id: a0\nspawn_depth: 2\ncontext_stamps: k1,k2"))
    assert (rec.adopted_project, rec.parent_agent_id, rec.spawn_depth, rec.context_stamps) == (
        "old-proj", "a0", 2, ("k1", "k2"))


def test_a_legacy_specstory_import_record_reads_as_an_import_by_that_tool():
    rec, _ = parse_record(go_record(schema=1, session="s1", root=ROOT, body="x\n", kind="specstory-import"))
    assert (rec.source_kind, rec.source_tool) == ("import", "specstory")


def test_a_go_lane_lists_in_place(home):
    lane = Lane(home, ROOT).ensure("records")
    for i, schema in enumerate((1, 2, 3)):
        (lane.records / f"2026010{i}T000000.000000000Z-s1-{i}.md").write_bytes(
            go_record(schema=schema, session="s1", root=ROOT, body=f"{i}\n", agent="" if i == 0 else f"a{i}"))
    records = list_for_session(lane, "s1")
    assert records[0].agent_id == "" and sorted(r.agent_id for r in records[1:]) == ["a1", "a2"]
    assert sorted(r.schema for r in list_records(lane)) == [1, 2, 3]


def test_ingest_finds_a_transcript_already_in_a_go_corpus_present(home, tmp_path, config):
    sha = make_repo(tmp_path / "repo")
    path = write_jsonl(tmp_path / "projects" / "p" / "s1.jsonl", [claude_line("s1", str(tmp_path / "repo"), 0)])
    raw = path.read_bytes()
    lane = Lane(home, sha).ensure("records")
    (lane.records / "20260102T030405.123456789Z-s1.md").write_bytes(
        go_record(schema=1, session="s1", root=sha, body=json.dumps({"redacted": True}) + "\n",
                  sha256=hashlib.sha256(raw).hexdigest()))
    report = ingest(home, [tmp_path / "projects"], config=config, now_ns=T0)
    assert report.staged == [] and report.present == 1
    assert [(r.root_sha, r.present) for r in report.repositories] == [(sha, 1)]
