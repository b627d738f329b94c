"""Session notes: the fallback that finds a lane when a worktree is gone."""

import os

import pytest

from abcd_daemon.errors import NotFoundError
from abcd_daemon.locate.notes import AmbiguousSession, note_gap, note_session, read_gap, session_lane
from abcd_daemon.store.lane import Lane

T0 = 1_767_225_600 * 10**9
DAY = 86400 * 10**9
TTL = 30 * 86400.0


def test_session_repo_round_trip(home):
    lane = Lane(home, "1" * 40)
    note_session(lane, "sess-9", now_ns=T0, ttl_s=TTL)
    assert (lane.sessions / "sess-9").stat().st_size == 0
    assert session_lane(home, "sess-9").root_sha == "1" * 40


def test_session_repo_refuses_an_ambiguous_session(home):
    for ch in "12":
        note_session(Lane(home, ch * 40), "shared", now_ns=T0, ttl_s=TTL)
    with pytest.raises(AmbiguousSession, match="claimed by 2 stores"):
        session_lane(home, "shared")


def test_session_repo_unknown_session_is_an_error(home):
    with pytest.raises(NotFoundError, match="no store has seen session"):
        session_lane(home, "never")


def test_session_repo_refuses_a_directory_reference(home):
    lane = Lane(home, "1" * 40).ensure("sessions")
    os.mkdir(lane.sessions / "dir-session")
    with pytest.raises(NotFoundError):
        session_lane(home, "dir-session")


def test_session_notes_are_pruned(home):
    lane = Lane(home, "1" * 40)
    note_session(lane, "old", now_ns=T0, ttl_s=TTL)
    note_session(lane, "recent", now_ns=T0 + 20 * DAY, ttl_s=TTL)
    note_session(lane, "new", now_ns=T0 + 31 * DAY, ttl_s=TTL)
    assert sorted(os.listdir(lane.sessions)) == ["new", "recent"]


def test_subagent_gap_marker_counts_first_and_last_sighting(home):
    lane = Lane(home, "1" * 40)
    assert read_gap(lane) is None
    note_gap(lane, "SubagentStop", now_ns=T0)
    marker = note_gap(lane, "SubagentStop", now_ns=T0 + DAY)
    assert marker.count == 2
    assert marker.first_seen == "2026-01-01T00:00:00Z" and marker.last_seen == "2026-01-02T00:00:00Z"
    assert read_gap(lane).count == 2
