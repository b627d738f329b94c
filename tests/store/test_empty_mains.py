"""An empty main transcript is remembered, so reconstruct says EMPTY, never ABSENT."""

from __future__ import annotations

import json
import os

from abcd_daemon.config import Config
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.scanner import Identity, build_scanner
from abcd_daemon.store.capture import capture
from abcd_daemon.store.empty_mains import main_was_empty, note_empty_main
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.meta import CaptureMeta

from ..intake.conftest import T0, intake, spool_entry  # noqa: F401 - the intake fixture

SESSION = "e3b0c442-0000-4000-8000-000000000e00"
AGENT_LINE = json.dumps({"type": "user", "uuid": "u1", "sessionId": SESSION, "agentId": "a1",
                         "isSidechain": True, "timestamp": "2026-01-01T00:00:01.000Z",
                         "message": {"role": "user", "content": "look around"}}).encode() + b"\n"


def _end(home, repo, transcript):
    return spool_entry(home.spool, "000-end.json",
                       {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SessionEnd",
                        "transcript_path": str(transcript)})


def test_a_session_end_with_an_empty_main_file_is_noted_not_failed(home, intake, repo, tmp_path):
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_bytes(b"")
    path = _end(home, repo[0], transcript)
    out = intake(path)
    assert out.status == "empty"
    assert "main transcript is empty (zero bytes)" in out.message
    assert not path.exists()  # taken: nothing is waiting to be fixed
    assert not home.spool_failed.exists() or not os.listdir(home.spool_failed)
    lane = Lane(home, repo[1])
    assert main_was_empty(lane, SESSION)
    assert oct(os.stat(lane.empty_mains / SESSION).st_mode & 0o777) == "0o600"


def test_reconstruct_reports_an_empty_main_from_the_marker_and_its_stored_agents(
        home, intake, repo, tmp_path):
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_bytes(b"")
    assert intake(_end(home, repo[0], transcript)).status == "empty"
    lane = Lane(home, repo[1])
    scanner = build_scanner(Identity(home=str(tmp_path / "nobody"), user="nobody"))
    capture(lane, AGENT_LINE, CaptureMeta(session_id=SESSION, agent_id="a1", lineage_source="hook",
                                          spawn_attribution="unattributed"),
            scanner=scanner, config=Config(), now_ns=T0)
    r = reconstruct(lane, ReconstructOptions(session_id=SESSION), now_ns=T0)
    assert r.telemetry.completeness.main_thread_empty
    assert not r.telemetry.completeness.main_thread_present
    assert b"- main thread: EMPTY" in r.artefact and b"ABSENT" not in r.artefact


def test_a_symlink_in_the_markers_place_does_not_count(home, repo, tmp_path):
    lane = Lane(home, repo[1])
    note_empty_main(lane, "other-session", now_ns=T0)
    (lane.empty_mains / SESSION).symlink_to(lane.empty_mains / "other-session")
    assert main_was_empty(lane, "other-session")
    assert not main_was_empty(lane, SESSION)
    assert not main_was_empty(lane, "../escape")  # not an id: never a path
