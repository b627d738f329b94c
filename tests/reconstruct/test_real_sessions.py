"""Real Claude Code sessions, stored the way the SubagentStop hook stores them, then
reconstructed from the store; and the artefact's self-containment and determinism."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import Record, record_filename
from abcd_daemon.store.records import list_for_session
from .real import (NS, REAL_PROJECTS, independent_spawns, independent_tokens, main_threads,
                   sessions, store, store_session)
from .support import outside_fences, section

REAL = "real_projects/-experiments-worktrees"
SESSION = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
_NS = NS
_PINNED = Path(__file__).parent / "data" / "real_totals.json"


def _store(lane: Lane, session: str, body: bytes, *, captured_ns: int, agent_id: str = "",
           meta: dict | None = None) -> Record:
    return store(lane, session, body, captured_ns=captured_ns, agent_id=agent_id, meta=meta)


_store_session = store_session


def test_a_real_session_reconstructs_with_every_subagent_placed(home, repo, fixtures_dir):
    lane = Lane(home, repo[1])
    session = _store_session(lane, fixtures_dir / REAL / f"{SESSION}.jsonl")
    r = reconstruct(lane, ReconstructOptions(session_id=session, max_block_bytes=8192),
                    now_ns=_NS)
    t = r.telemetry
    c = t.completeness
    assert (c.agents_total, c.records_used, c.records_found) == (7, 7, 7)
    assert (c.agents_without_spawn_point, c.agents_without_join_point) == (0, 0)
    assert c.agents_unattributed == 6  # no sidecar carried a spawn depth…
    assert {a.placed_by for a in t.agents if a.agent_id} == {"transcript"}  # …rung 2 did
    assert {a.spawned_at_turn for a in t.agents if a.agent_id} == {10, 26}
    doc = r.artefact.decode()
    assert "## Unattributed sub-agents" not in outside_fences(doc)
    body = section(doc, "## Main thread")
    assert body.count("> **[SPAWNED** agent") == 6 and body.count("> **[JOINED** agent") == 6
    assert t.tokens.api_responses < t.tokens.usage_lines_seen  # de-duplication happened
    assert t.agent_types == ["general-purpose"]


def test_every_real_session_reconstructs(home, repo, fixtures_dir):
    lane = Lane(home, repo[1])
    mains = main_threads(fixtures_dir / "real_projects")
    assert len(mains) >= 29
    for main in mains:
        session = _store_session(lane, main)
        r = reconstruct(lane, ReconstructOptions(session_id=session), now_ns=_NS)
        assert r.telemetry.completeness.main_thread_present, main
        assert outside_fences(r.artefact.decode()), main


_ABSOLUTE = re.compile(r"(?:^|[\s(`'\"=:])(?:/[\w.@~+-]+){2,}|[A-Za-z]:\\")


def test_reconstruction_is_self_contained(home, repo, fixtures_dir, monkeypatch):
    from abcd_daemon.errors import ReadRefused
    from abcd_daemon.reconstruct import api
    from abcd_daemon.store import records

    lane = Lane(home, repo[1])
    session = _store_session(lane, fixtures_dir / REAL / f"{SESSION}.jsonl")
    # A record whose body read fails: the error names its absolute path on disk.
    broken = record_filename(_store(lane, session, b"{}", captured_ns=_NS - 5,
                                    agent_id="a4ca7529859c158c2"))

    def read_body(lane_, record):
        if record.name == broken:
            raise ReadRefused(f"record {str(lane_.records / broken)!r} could not be read "
                              "(Input/output error)", reason="unreadable")
        return records.read_body(lane_, record)

    monkeypatch.setattr(api, "read_body", read_body)
    r = reconstruct(lane, ReconstructOptions(session_id=session), now_ns=_NS)
    doc = r.artefact.decode()
    said = outside_fences(doc)
    assert not [line for line in said if _ABSOLUTE.search(line)]
    assert str(home.root) not in doc and str(lane.records) not in doc
    assert ".claude/projects" not in "\n".join(said)
    assert "transcript_path" not in doc
    # Records are named by basename, and every record of the set is named.
    for name in os.listdir(lane.records):
        if name.endswith(".md"):
            assert f"`{name}`" in doc
    # What the participants typed is reproduced, paths included (inside fences).
    assert "-experiments/worktrees/.claude/worktrees/agent-a4ca7529" in doc
    assert f"- record NOT used: `{broken}` — unreadable: record '{broken}' could not" in doc


_CHILD = """
import sys
from abcd_daemon.paths import Home
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.store.lane import Lane
lane = Lane(Home(sys.argv[1]), sys.argv[2])
r = reconstruct(lane, ReconstructOptions(session_id=sys.argv[3], mode=sys.argv[4],
                max_block_bytes=int(sys.argv[5])), now_ns=int(sys.argv[6]))
open(sys.argv[7], "wb").write(r.artefact)
open(sys.argv[7] + ".json", "wb").write(r.telemetry_json())
"""


def test_reconstruct_is_deterministic(home, repo, fixtures_dir, tmp_path):
    lane = Lane(home, repo[1])
    session = _store_session(lane, fixtures_dir / REAL / f"{SESSION}.jsonl")
    outputs = []
    for seed, now in (("1", _NS), ("2", _NS + 86_400_000_000_000)):
        for mode, cap in (("full", "0"), ("spine", "512")):
            out = tmp_path / f"{seed}-{mode}.md"
            subprocess.run([sys.executable, "-c", _CHILD, str(home.root), lane.root_sha,
                            session, mode, cap, str(now), str(out)], check=True,
                           env=dict(os.environ, PYTHONHASHSEED=seed))
            outputs.append((out.read_bytes(), json.loads((tmp_path / f"{out.name}.json")
                                                         .read_text())))
    (full1, tel1), (spine1, _), (full2, tel2), (spine2, _) = outputs
    assert full1 == full2 and spine1 == spine2 and full1 != spine1
    assert tel1["generated_at"] != tel2["generated_at"]
    tel1.pop("generated_at"), tel2.pop("generated_at")
    assert tel1 == tel2
    assert b"1970" not in full1 and tel1["started_at"][:4].encode() in full1


_TOKEN_FIELDS = ("input", "output", "cache_creation_input", "cache_read_input", "total",
                 "api_responses")


def test_telemetry_equals_an_independent_counter_on_every_real_session(home, repo):
    lane = Lane(home, repo[1])
    for main in main_threads():
        session = store_session(lane, main)
        tokens = reconstruct(lane, ReconstructOptions(session_id=session),
                             now_ns=_NS).telemetry.tokens
        assert {k: getattr(tokens, k) for k in _TOKEN_FIELDS} == independent_tokens(main), main


def test_telemetry_totals_on_every_real_session_stay_what_they_were(home, repo):
    """The totals of every real session, pinned before issue 12 changed placement,
    typing and the missing-agent report: none of that may move a token."""
    pinned = json.loads(_PINNED.read_text())
    lane = Lane(home, repo[1])
    seen = {}
    for main in main_threads():
        session = store_session(lane, main)
        tokens = reconstruct(lane, ReconstructOptions(session_id=session),
                             now_ns=_NS).telemetry.tokens
        seen[session] = {k: getattr(tokens, k) for k in pinned[session]}
    assert seen == pinned


def test_every_real_session_places_types_and_reports_what_its_files_say(home, repo):
    """The real-data benchmark's targets, session by session, against what the files
    say when read without the reconstruct package."""
    lane = Lane(home, repo[1])
    placed_total = 0
    for main in sessions():
        said = independent_spawns(main)
        session = store_session(lane, main)
        if not list_for_session(lane, session):
            continue  # an empty main file and no sub-agent: nothing is stored
        t = reconstruct(lane, ReconstructOptions(session_id=session), now_ns=_NS).telemetry
        c = t.completeness
        placed = {a.agent_id for a in t.agents if a.spawned_at_turn}
        assert placed == said["placeable"], main
        assert all(a.agent_type for a in t.agents if a.agent_id in placed), main
        assert c.compaction_agents_linked == len(said["compaction"]), main
        assert {m.agent_id or f"call:{m.spawn_tool_use_id}" for m in c.missing_agents} == \
            said["missing"], main
        assert c.lines_unrecognised == 0, main
        placed_total += len(placed)
    assert placed_total >= 9


def test_real_2_0_sessions_place_their_older_layout_agents_at_the_task_call(home, repo):
    lane = Lane(home, repo[1])
    for project, session, agent, kind in (
            ("-src-deep-manifest", "a7da6a22-facc-4fcd-8bab-f83c87862004", "c8d9b115",
             "Explore"),
            ("-Users-dain-workspace-coderabbit-review-helper",
             "cb2e607c-c758-415a-8b45-c49e4631906a", "ea02459f", "Plan")):
        main = REAL_PROJECTS / project / f"{session}.jsonl"
        assert f"agentId: {agent}".encode() not in main.read_bytes()  # only structured
        store_session(lane, main)
        r = reconstruct(lane, ReconstructOptions(session_id=session), now_ns=_NS)
        a = next(a for a in r.telemetry.agents if a.agent_id == agent)
        assert a.placed_by == "transcript" and a.spawned_in == "main" and a.joined_at_turn
        assert (a.agent_type, a.agent_type_source) == (kind, "spawn call")
        doc = r.artefact.decode()
        assert f"> **[JOINED** agent `{agent}` here" in section(doc, "## Main thread")
        assert "## Unattributed sub-agents" not in outside_fences(doc) or \
            f"## Agent `{agent}`" not in section(doc, "## Unattributed sub-agents")


def test_real_join_markers_carry_the_agent_result_line_times(home, repo, fixtures_dir):
    # Main turn 11 merges a TaskUpdate result (13:20:18) with three agent results.
    lane = Lane(home, repo[1])
    session = _store_session(lane, fixtures_dir / REAL / f"{SESSION}.jsonl")
    r = reconstruct(lane, ReconstructOptions(session_id=session), now_ns=_NS)
    body = section(r.artefact.decode(), "## Main thread")
    turn = body[body.index("### Turn 11 — user · 2026-04-18T13:20:18Z"):]
    turn = turn[:turn.index("### Turn 12 ")]
    for agent, at in (("a4ca7529859c158c2", "13:33:59"), ("a52886dc180afb356", "13:33:40"),
                      ("ab1e6e141221a29ab", "13:28:25")):
        assert (f"> **[JOINED** agent `{agent}` here — its result reached this thread at "
                f"this turn, in the line stamped 2026-04-18T{at}Z. **]**") in turn
    by_id = {a.agent_id: a for a in r.telemetry.agents}
    assert by_id["ab1e6e141221a29ab"].joined_at == "2026-04-18T13:28:25.494Z"
    assert sorted(by_id["ab1e6e141221a29ab"].concurrent_with) == [
        "a4ca7529859c158c2", "a52886dc180afb356"]
