"""Real Claude Code sessions from ``tests/fixtures/claude-code-log/real_projects``,
stored the way capture stores them, for tests and for ``bench/reconstruct.py --real``.

- :func:`store_session` writes a main thread and every sub-agent transcript of its
  session (both layouts: ``<session>/subagents/agent-<id>.jsonl`` and the older
  ``agent-<id>.jsonl`` beside it, whose session its lines name) as records, with the
  lineage a SubagentStop hook or an ingest learns: agent id from the file name, type
  from the ``.meta.json`` sidecar, ``sidecar`` attribution only when the sidecar
  carries a spawn depth.
- :func:`main_threads` lists every non-empty main-thread file.
- :func:`independent_tokens` counts a session's tokens from the files alone, without
  the reconstruct package: once per ``message.id`` across all files, input and cache
  the largest seen, output the largest; usage without an id once per line;
  ``agent_progress`` copies never.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename

REAL_PROJECTS = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code-log" / "real_projects"
NS = 1_780_000_000_000_000_000


def store(lane: Lane, session: str, body: bytes, *, captured_ns: int, agent_id: str = "",
          meta: dict | None = None) -> Record:
    """Write one record as capture would (see the module docstring)."""
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


def _first_session(path: Path) -> str:
    for raw in path.read_bytes().split(b"\n"):
        if raw.strip():
            try:
                value = json.loads(raw)
            except ValueError:
                return ""
            return value.get("sessionId", "") if isinstance(value, dict) else ""
    return ""


def agent_files(main: Path) -> list[Path]:
    """Every sub-agent transcript of ``main``'s session, in both layouts."""
    session = main.stem
    found = sorted((main.parent / session / "subagents").glob("agent-*.jsonl"))
    found += [old for old in sorted(main.parent.glob("agent-*.jsonl"))
              if _first_session(old) == session]
    return found


def store_session(lane: Lane, main: Path) -> str:
    """Store ``main`` and its sub-agents (see the module docstring); the session id. A
    main file that is absent or empty is not stored (capture never stores an empty
    file): only its sub-agents are."""
    session = main.stem
    if main.exists() and main.stat().st_size:
        store(lane, session, main.read_bytes(), captured_ns=NS)
    for i, path in enumerate(agent_files(main), 1):
        sidecar = path.with_name(path.stem + ".meta.json")
        meta = json.loads(sidecar.read_text()) if sidecar.exists() else {}
        store(lane, session, path.read_bytes(), captured_ns=NS + i,
              agent_id=path.stem[len("agent-"):], meta=meta)
    return session


def main_threads(root: Path = REAL_PROJECTS) -> list[Path]:
    """Every non-empty main-thread file under ``root``, sorted."""
    return [p for p in sorted(root.glob("*/*.jsonl"))
            if not p.name.startswith("agent-") and p.stat().st_size]


def sessions(root: Path = REAL_PROJECTS) -> list[Path]:
    """Every session under ``root`` as the path of its main file (which may be empty or
    absent: a session named only by its older-layout sub-agents' lines), sorted."""
    found = {p for p in root.glob("*/*.jsonl") if not p.name.startswith("agent-")}
    for old in root.glob("*/agent-*.jsonl"):
        session = _first_session(old)
        if session:
            found.add(old.parent / f"{session}.jsonl")
    return sorted(found)


def independent_tokens(main: Path) -> dict[str, int]:
    """The session's four token figures and its response count, counted from the files
    (see the module docstring)."""
    responses: dict[str, list[int]] = {}
    anonymous = [0, 0, 0, 0]
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
            "cache_read_input_tokens")
    for path in agent_files(main) + [main]:
        for raw in path.read_bytes().split(b"\n"):
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(line, dict) or line.get("type") != "assistant":
                continue
            message = line.get("message")
            if not isinstance(message, dict) or not isinstance(message.get("usage"), dict):
                continue
            u = message["usage"]
            values = [v if type(v) is int and v > 0 else 0 for v in (u.get(k) for k in keys)]
            rid = message.get("id")
            if isinstance(rid, str) and rid:
                seen = responses.setdefault(rid, [0, 0, 0, 0])
                responses[rid] = [max(a, b) for a, b in zip(seen, values)]
            else:
                anonymous = [a + b for a, b in zip(anonymous, values)]
    sums = [sum(r[i] for r in responses.values()) + anonymous[i] for i in range(4)]
    return {"input": sums[0], "output": sums[1], "cache_creation_input": sums[2],
            "cache_read_input": sums[3], "total": sum(sums), "api_responses": len(responses)}


_NAMED = re.compile(r"\bagentId: ([A-Za-z0-9_-]{1,128})")
SPAWN_TOOLS = ("Task", "Agent")


def _lines(path: Path):
    for raw in path.read_bytes().split(b"\n"):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict):
            yield line


def independent_spawns(main: Path) -> dict[str, set[str]]:
    """What the files alone say about a session's sub-agents, without the reconstruct
    package: ``stored`` (agent ids with a transcript), ``compaction`` (stored
    ``acompact…`` ids), ``placeable`` (stored agents a spawning ``Task``/``Agent`` call in
    a stored file names — through its result's ``toolUseResult.agentId`` or
    ``agentId: <id>`` text, an ``agent_progress`` line's ``parentToolUseID``, or the
    agent's sidecar ``toolUseId``) and ``missing`` (spawning calls, or agents named
    by progress lines, with no stored transcript: an agent id, else ``call:<id>``)."""
    files = agent_files(main)
    stored = {p.stem[len("agent-"):] for p in files}
    calls: set[str] = set()
    named: dict[str, str] = {}  # call -> agent
    for path in ([main] if main.exists() else []) + files:
        for line in _lines(path):
            data = line.get("data")
            if (line.get("type") == "progress" and isinstance(data, dict)
                    and data.get("type") == "agent_progress" and data.get("agentId")):
                named.setdefault(line.get("parentToolUseID") or f"?{data['agentId']}",
                                 data["agentId"])
            content = (line.get("message") or {}).get("content") if isinstance(
                line.get("message"), dict) else None
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and block.get("name") in SPAWN_TOOLS:
                    calls.add(block.get("id"))
                elif block.get("type") == "tool_result":
                    result = line.get("toolUseResult")
                    agent = result.get("agentId") if isinstance(result, dict) else None
                    text = json.dumps(block.get("content"))
                    m = _NAMED.search(text)
                    if agent or m:
                        named.setdefault(block.get("tool_use_id"), agent or m.group(1))
    for path in files:
        sidecar = path.with_name(path.stem + ".meta.json")
        if sidecar.exists():
            call = json.loads(sidecar.read_text()).get("toolUseId")
            if call:
                named.setdefault(call, path.stem[len("agent-"):])
    placeable = {named[c] for c in calls if c in named and named[c] in stored}
    missing = {named.get(c) or f"call:{c}" for c in calls if named.get(c) not in stored}
    missing |= {a for c, a in named.items() if c.startswith("?") and a not in stored}
    compaction = {a for a in stored if a.startswith("acompact")}
    return {"stored": stored, "compaction": compaction,
            "placeable": placeable - compaction, "missing": missing}
