"""Real Claude Code sessions, stored the way the SubagentStop hook stores them, then
reconstructed from the store; and the artefact's self-containment and determinism."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename
from .support import outside_fences, section

REAL = "real_projects/-experiments-worktrees"
SESSION = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
_NS = 1_780_000_000_000_000_000


def _store(lane: Lane, session: str, body: bytes, *, captured_ns: int, agent_id: str = "",
           meta: dict | None = None) -> Record:
    """Write one record as capture would: lineage the way a SubagentStop hook learns it
    (agent id from the file name, type from the sidecar; "sidecar" attribution only
    when the sidecar carries a spawn depth)."""
    meta = meta or {}
    record = Record(
        session_id=session, root_commit=lane.root_sha,
        source_sha256=hashlib.sha256(body).hexdigest(),
        captured_at=format_rfc3339_ns(captured_ns), agent_id=agent_id,
        agent_type=meta.get("agentType", "") if agent_id else "",
        parent_agent_id=meta.get("parentAgentId", ""),
        spawn_depth=int(meta.get("spawnDepth", 0) or 0),
        spawn_tool_use_id=meta.get("toolUseId", ""),
        lineage_source="hook" if agent_id else "",
        spawn_attribution=("sidecar" if "spawnDepth" in meta else "unattributed")
        if agent_id else "")
    lane.ensure("records")
    (lane.records / record_filename(record)).write_bytes(format_record(record, body))
    return record


def _store_session(lane: Lane, main: Path) -> str:
    """Store a main thread and every sub-agent transcript of its session (both layouts:
    ``<session>/subagents/agent-<id>.jsonl`` and ``agent-<id>.jsonl`` beside it)."""
    session = main.stem
    _store(lane, session, main.read_bytes(), captured_ns=_NS)
    candidates = sorted((main.parent / session / "subagents").glob("agent-*.jsonl"))
    for old in sorted(main.parent.glob("agent-*.jsonl")):
        first = old.read_bytes().split(b"\n", 1)[0]
        if first.strip() and json.loads(first).get("sessionId") == session:
            candidates.append(old)
    for i, path in enumerate(candidates, 1):
        sidecar = path.with_name(path.stem + ".meta.json")
        meta = json.loads(sidecar.read_text()) if sidecar.exists() else {}
        _store(lane, session, path.read_bytes(), captured_ns=_NS + i,
               agent_id=path.stem[len("agent-"):], meta=meta)
    return session


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
    mains = [p for p in sorted((fixtures_dir / "real_projects").glob("*/*.jsonl"))
             if not p.name.startswith("agent-") and p.stat().st_size]
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
