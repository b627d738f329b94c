"""What a transcript's bytes say about it: digest, harness, cwds, session and agent ids.

Pure: bytes (or lines, :class:`FactsReader`) in, :class:`Facts` out (the caller reads
the file, guarded: :mod:`.readfile` streams it). Every line is decoded on its own, keeping only the handful of keys ownership needs, so one broken or
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


class FactsReader:
    """The facts, gathered one line at a time (a transcript of any size is read in
    memory bounded by its longest line). Feed every line with :meth:`add`, then
    :meth:`facts`. Never raises."""

    def __init__(self) -> None:
        self.cwds: dict[str, None] = {}
        self.claude_sessions: dict[str, None] = {}
        self.store_sessions: dict[str, None] = {}
        self.agents: dict[str, None] = {}
        self.agent_type = ""
        self.lines = self.bad = 0
        self.sidechain_lines = self.main_lines = 0
        #: The last non-blank line seen (for ``settled``).
        self.last = b""

    def add(self, line: bytes) -> None:
        if line[:1].isspace() or not line:  # only then can it be blank
            if not line.strip():
                return
        self.last = line
        self.lines += 1
        try:
            rec = _DECODER.decode(line)
        except UNDECODABLE:
            self.bad += 1  # not an object, or broken JSON (e.g. a line still being written)
            return
        _add(self.cwds, rec.cwd)
        _add(self.claude_sessions, rec.sessionId)
        _add(self.store_sessions, rec.session_id)
        _add(self.agents, rec.agentId)
        _add(self.agents, rec.agent_id)
        if rec.isSidechain is True:
            self.sidechain_lines += 1
        elif rec.isSidechain is not None or rec.sessionId is not None:
            self.main_lines += 1
        if not self.agent_type and isinstance(rec.agentType, str):
            self.agent_type = rec.agentType

    def facts(self, *, sha256: str, size: int) -> Facts:
        if self.claude_sessions:
            harness, sessions = CLAUDE_CODE, self.claude_sessions
        elif self.store_sessions:
            harness, sessions = JSONL_STORE, self.store_sessions
        else:
            harness, sessions = "", {}
        return Facts(
            sha256=sha256,
            size=size,
            harness=harness,
            cwds=tuple(self.cwds),
            session_ids=tuple(sessions),
            agent_ids=tuple(self.agents),
            agent_type=self.agent_type,
            sidechain=bool(self.sidechain_lines) and not self.main_lines,
            lines=self.lines,
            bad_lines=self.bad,
            settled=transcript_settled(self.last) if size else True,
        )


def facts_of(raw: bytes, *, sha256: str = "") -> Facts:
    """The facts of one transcript's bytes (``sha256``: its digest, when the caller has
    it already). Never raises."""
    reader = FactsReader()
    for line in raw.split(b"\n"):
        reader.add(line)
    return reader.facts(sha256=sha256 or hashlib.sha256(raw).hexdigest(), size=len(raw))
