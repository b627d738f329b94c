"""Phrases the artefact writes outside fences: times, spans, points in a thread, who
spawned an agent, where its type came from. Every non-literal value goes through
:mod:`.fence`. Pure."""

from __future__ import annotations

from .fence import code, code_cell
from .placement import RECORD, TRANSCRIPT, TYPE_CALL, TYPE_RESULT, Placement
from .schema import AgentTelemetry
from .spans import duration  # re-exported: one definition, light for the CLI

NOT_RECOVERABLE = "NOT RECOVERABLE from what is stored"
NOT_STORED = "spawned, transcript not stored"
PLACED_BY = {
    RECORD: "placed by the record's stored spawn tool call",
    TRANSCRIPT: "placed by the spawning transcript's own tool result",
}
TYPE_FROM = {
    TYPE_CALL: "from the spawning tool call's `subagent_type` input; no hook payload or "
               "sidecar named it",
    TYPE_RESULT: "from the spawning tool result's `agentType`; no hook payload or sidecar "
                 "named it",
}


def time_label(stamp: str) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` for an RFC 3339 stamp or time key; ``—`` for none."""
    return stamp[:19] + "Z" if stamp else "—"


def span(first: str, last: str, seconds: float) -> str:
    if not first:
        return "—"
    return f"{time_label(first)} → {time_label(last)} ({duration(seconds)})"


def point(host: str | None, turn: int, *, cells: bool = False) -> str:
    """``main turn 7`` / `` `a1` turn 3`` for a turn of a host thread; ``—`` for none."""
    if not turn or host is None:
        return "—"
    if not host:
        return f"main turn {turn}"
    return f"{code_cell(host) if cells else code(host)} turn {turn}"


def host_name(host: str) -> str:
    """``the main thread`` or ``agent `<id>` ``."""
    return "the main thread" if host in ("", "main") else f"agent {code(host)}"


def spawned_by(a: AgentTelemetry, p: Placement) -> str:
    if p.is_compaction and not a.parent_agent_id:
        return "the harness (a compaction)"
    if a.parent_agent_id:
        return code(a.parent_agent_id)
    if p.placed or a.spawn_attribution in ("sidecar", "transcript"):
        return "main thread"
    return "unknown"
