"""Taking liveness markers (Stop, UserPromptSubmit) and SessionStart: the session is
noted, the transcript named for the daemon to follow, nothing staged, nothing kept."""

import json
import os
import time

import pytest

from abcd_daemon.config import Config
from abcd_daemon.intake.resolve import LaneResolver
from abcd_daemon.intake.take import take
from abcd_daemon.store.lane import Lane


def spooled(home, name, event, payload: bytes, *, over_cap=False) -> str:
    home.spool_new.mkdir(parents=True, exist_ok=True)
    header = json.dumps({"abcd_spool": 1, "event": event, "over_cap": over_cap}).encode()
    path = home.spool_new / name
    path.write_bytes(header + b"\n" + payload)
    return str(path)


def taken(home, path):
    config = Config()
    return take(home, path, resolver=LaneResolver(home, config), config=config, now_ns=time.time_ns())


@pytest.mark.parametrize("event", ["stop", "user-prompt-submit", "session-start"])
def test_a_marker_notes_the_session_and_names_its_transcript_without_staging(home, repo, event):
    path, sha = repo
    marker = json.dumps({"session_id": "s1", "cwd": str(path),
                         "transcript_path": "/h/projects/-r/s1.jsonl"}).encode()
    outcome = taken(home, spooled(home, "1-1-a.json", event, marker))
    assert outcome.status == ("noted" if event == "session-start" else "live")
    assert outcome.transcript_path == "/h/projects/-r/s1.jsonl" and outcome.root_sha == sha
    lane = Lane(home, sha)
    assert (lane.sessions / "s1").exists() and not lane.staging.exists()
    assert os.listdir(home.spool_new) == []


def test_a_marker_over_the_cap_is_dropped_quietly(home):
    outcome = taken(home, spooled(home, "1-1-b.json", "user-prompt-submit", b"", over_cap=True))
    assert outcome.status == "ignored" and os.listdir(home.spool_new) == []
    assert not home.spool_failed.exists()


def test_a_marker_with_no_session_is_kept_in_failed_with_the_reason(home):
    outcome = taken(home, spooled(home, "1-1-c.json", "stop", b"{}"))
    assert outcome.status == "failed" and "session_id" in outcome.message
    assert (home.spool_failed / "1-1-c.json.reason").exists()
