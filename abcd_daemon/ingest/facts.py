"""What a transcript's bytes say about it: digest, harness, cwds, session and agent ids.

Pure: bytes in, :class:`Facts` out (the caller reads the file, guarded). Every line is
decoded on its own, keeping only the handful of keys ownership needs, so one broken or
unknown line is counted, never fatal. Keys read:

- Claude Code: ``cwd``, ``sessionId``, ``agentId``, ``agentType``, ``isSidechain``
  (``sidechain``: some line says ``isSidechain: true`` and no line that names a
  session or carries the key says otherwise — the lines call the file a sub-agent's,
  whatever its name);
- the JSONL store harness (seed 004): ``session_id``, ``agent_id`` (it records no cwd).

The harness is ``claude-code`` when a line carries ``sessionId``, ``jsonl-store`` when
lines carry ``session_id`` and none ``sessionId``, and "" when no line names a session
(a title-only or snapshot-only file: not a conversation).
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from ..errors import UNDECODABLE
from ..intake.harness import transcript_settled

CLAUDE_CODE = "claude-code"
JSONL_STORE = "jsonl-store"


class _Line(msgspec.Struct):
    cwd: Any = None
    sessionId: Any = None
    agentId: Any = None
    agentType: Any = None
    isSidechain: Any = None
    session_id: Any = None
    agent_id: Any = None


_DECODER = msgspec.json.Decoder(_Line)


class Facts(msgspec.Struct, frozen=True, kw_only=True):
    """Distinct values in first-seen order. ``settled``: the last non-blank line is
    complete JSON (a harness still writing leaves it cut)."""

    sha256: str
    size: int
    harness: str
    cwds: tuple[str, ...] = ()
    session_ids: tuple[str, ...] = ()
    agent_ids: tuple[str, ...] = ()
    agent_type: str = ""
    sidechain: bool = False
    lines: int = 0
    bad_lines: int = 0
    settled: bool = True


def _add(seen: dict[str, None], value: Any) -> None:
    if isinstance(value, str) and value:
        seen.setdefault(value, None)


def facts_of(raw: bytes, *, sha256: str = "") -> Facts:
    """The facts of one transcript's bytes (``sha256``: its digest, when the caller has
    it already). Never raises."""
    cwds: dict[str, None] = {}
    claude_sessions: dict[str, None] = {}
    store_sessions: dict[str, None] = {}
    agents: dict[str, None] = {}
    agent_type = ""
    lines = bad = 0
    sidechain_lines = main_lines = 0
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        lines += 1
        try:
            rec = _DECODER.decode(line)
        except UNDECODABLE:
            bad += 1  # not an object, or broken JSON (e.g. a line still being written)
            continue
        _add(cwds, rec.cwd)
        _add(claude_sessions, rec.sessionId)
        _add(store_sessions, rec.session_id)
        _add(agents, rec.agentId)
        _add(agents, rec.agent_id)
        if rec.isSidechain is True:
            sidechain_lines += 1
        elif rec.isSidechain is not None or rec.sessionId is not None:
            main_lines += 1
        if not agent_type and isinstance(rec.agentType, str):
            agent_type = rec.agentType
    if claude_sessions:
        harness, sessions = CLAUDE_CODE, claude_sessions
    elif store_sessions:
        harness, sessions = JSONL_STORE, store_sessions
    else:
        harness, sessions = "", {}
    return Facts(
        sha256=sha256 or hashlib.sha256(raw).hexdigest(),
        size=len(raw),
        harness=harness,
        cwds=tuple(cwds),
        session_ids=tuple(sessions),
        agent_ids=tuple(agents),
        agent_type=agent_type,
        sidechain=bool(sidechain_lines) and not main_lines,
        lines=lines,
        bad_lines=bad,
        settled=transcript_settled(raw) if raw else True,
    )
