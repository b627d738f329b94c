"""Short ids: a unique prefix of 6+ characters names a session or an agent, like git;
an ambiguous one is refused with every candidate (session id, start time, repository)."""

from __future__ import annotations

import hashlib
import json

import pytest

from abcd_daemon.errors import AmbiguousId, NotFoundError
from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename
from abcd_daemon.store.sessions import (expand_session, find_session, resolve_record,
                                        select_sessions)

SHA_A, SHA_B = "a" * 40, "b" * 40
T0 = 1_780_000_000


def store(lane: Lane, session: str, agent: str = "", *, started: str = "2026-03-01T10:00:00.000Z",
          captured: int = 0) -> Record:
    body = (json.dumps({"type": "user", "sessionId": session, "timestamp": started,
                        "message": {"role": "user", "content": "hi"}}) + "\n").encode()
    record = Record(session_id=session, root_commit=lane.root_sha, agent_id=agent,
                    source_sha256=hashlib.sha256(body + agent.encode()).hexdigest(),
                    captured_at=format_rfc3339_ns((T0 + captured) * 10**9))
    lane.ensure("records")
    (lane.records / record_filename(record)).write_bytes(format_record(record, body))
    return record


@pytest.fixture
def lanes(home: Home):
    return Lane(home, SHA_A), Lane(home, SHA_B)


def test_a_unique_prefix_of_six_characters_names_the_session(lanes):
    a, _ = lanes
    store(a, "29ccd257-68b1-427f-ae5f-6524b7cb6f20")
    store(a, "03eb5929-52b3-4b13-ada3-b93ae35806b8")
    ref = find_session([a], "29ccd2")
    assert ref.session_id == "29ccd257-68b1-427f-ae5f-6524b7cb6f20" and ref.root_sha == SHA_A
    assert ref.started_at == "2026-03-01T10:00:00.000Z"


def test_an_exact_id_wins_over_a_longer_id_it_prefixes(lanes):
    a, _ = lanes
    store(a, "abcdef")
    store(a, "abcdef-and-more")
    assert find_session([a], "abcdef").session_id == "abcdef"


def test_an_ambiguous_prefix_lists_every_candidate_with_start_time_and_repository(lanes):
    a, b = lanes
    store(a, "deadbeef-1111", started="2026-03-01T10:00:00Z")
    (a.path / "repository.json").write_text('{"name": "widgets"}')  # intake's note
    store(b, "deadbeef-2222", started="2026-03-02T11:00:00Z")
    with pytest.raises(AmbiguousId) as err:
        find_session([a, b], "deadbeef")
    assert err.value.exit_code == 2
    assert err.value.details == (
        "deadbeef-1111  started 2026-03-01T10:00:00Z  widgets",
        f"deadbeef-2222  started 2026-03-02T11:00:00Z  repository {SHA_B[:12]}",
    )


def test_a_prefix_shorter_than_six_characters_is_never_expanded(lanes):
    a, _ = lanes
    store(a, "29ccd257-68b1")
    with pytest.raises(NotFoundError, match="at least 6 characters"):
        find_session([a], "29ccd")
    assert expand_session([a], "29ccd") == "29ccd"  # left for the caller's own not-found


def test_show_resolves_an_agent_prefix_and_lists_an_ambiguous_one_with_its_session(lanes):
    a, _ = lanes
    store(a, "s-main-0001")
    store(a, "s-main-0001", "a4ca7529e0", captured=1)
    store(a, "s-main-0001", "a4ca7529f1", captured=2)
    assert resolve_record(a, "a4ca7529e").agent_id == "a4ca7529e0"
    with pytest.raises(AmbiguousId) as err:
        resolve_record(a, "a4ca75")
    assert [d.split("  ")[0] for d in err.value.details] == [
        "agent a4ca7529e0 of s-main-0001", "agent a4ca7529f1 of s-main-0001"]
    assert resolve_record(a, "s-main").session_id == "s-main-0001" and not resolve_record(a, "s-main").agent_id


def test_since_keeps_sessions_with_a_record_captured_at_or_after_it(lanes):
    a, b = lanes
    store(a, "old-session", captured=0)
    store(b, "new-session", captured=100)
    chosen = select_sessions([a, b], [], since_ns=(T0 + 100) * 10**9)
    assert [r.session_id for r in chosen] == ["new-session"]
    assert {r.session_id for r in select_sessions([a, b], [])} == {"old-session", "new-session"}
