"""Placement: where in which thread each sub-agent was spawned and where it joined.

Rules (reference §6.3, seed 000):
- Section order: agents with a recorded depth first (depth 0 on a sub-agent means "not
  recorded" and sorts last), then by depth, then start time (unknown last), then id.
- Host: the parent agent's thread when ``parent_agent_id`` names a thread of this set;
  the main thread when no parent is named; NOTHING when a named parent is absent (the
  main thread is never substituted: that would assert a spawn that did not happen).
- Spawn point, a two-rung ladder, never guessed:
  rung 1 (``placed_by: record``) — the record's stored ``spawn_tool_use_id`` equals a
  tool-call id in the host;
  rung 2 (``placed_by: transcript``) — the first tool result in the host whose text
  names the agent id (as a whole word) identifies the call through its
  ``tool_use_id``; the call's turn is the spawn point, or the result's own turn when
  the call itself is not in the host.
- Join point: the first host turn at or after the spawn where the agent's result
  reached the thread — the spawn call's own result, unless that result only
  acknowledges a background launch; or a notification (task notification, completed
  ``TaskOutput``) naming the agent. None found: not recoverable, counted.

Pure.
"""

from __future__ import annotations

import ahocorasick_rs

from .model import TOOL_RESULT, TOOL_USE, Transcript
from .selection import Thread

RECORD = "record"
TRANSCRIPT = "transcript"
SPAWN = "spawn"
JOIN = "join"

#: Characters that continue an id: a match flanked by one is part of a longer word.
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class Placement:
    """Where one sub-agent sits. ``host`` is the host thread's agent id (``""`` for the
    main thread) or None when there is no host; turns are 1-based, 0 when unknown."""

    __slots__ = ("agent_id", "host", "parent_absent", "spawn_turn", "join_turn",
                 "call_id", "placed_by")

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self.host: str | None = None
        self.parent_absent = False
        self.spawn_turn = 0
        self.join_turn = 0
        self.call_id = ""
        self.placed_by = ""

    @property
    def placed(self) -> bool:
        return self.spawn_turn > 0

    @property
    def spawned_in(self) -> str:
        """``main``, the parent agent id, or ``""`` when unplaced."""
        if not self.placed:
            return ""
        return self.host or "main"


class _HostIndex:
    """One host thread's tool calls, tool results and notifications, indexed once."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.call_turn: dict[str, int] = {}
        self.results: dict[str, list[tuple[int, bool]]] = {}  # call id -> (turn, ack)
        self.notified: dict[str, list[int]] = {}
        for turn in transcript.turns:
            for agent in turn.notified:
                self.notified.setdefault(agent, []).append(turn.index)
            for block in turn.blocks:
                if block.kind == TOOL_USE and block.ref:
                    self.call_turn.setdefault(block.ref, turn.index)
                elif block.kind == TOOL_RESULT and block.ref:
                    self.results.setdefault(block.ref, []).append(
                        (turn.index, block.async_ack))

    def first_mentions(self, agent_ids: list[str]) -> dict[str, tuple[int, str]]:
        """For each agent id, the first tool result naming it: (turn, tool_use_id)."""
        found: dict[str, tuple[int, str]] = {}
        if not agent_ids:
            return found
        matcher = ahocorasick_rs.AhoCorasick(agent_ids)
        for turn in self.transcript.turns:
            for block in turn.blocks:
                if block.kind != TOOL_RESULT or not block.text:
                    continue
                text = block.text
                for index, start, end in matcher.find_matches_as_indexes(
                        text, overlapping=True):
                    agent = agent_ids[index]
                    if agent in found:
                        continue
                    if (start and text[start - 1] in _WORD) or (
                            end < len(text) and text[end] in _WORD):
                        continue
                    found[agent] = (turn.index, block.ref)
                if len(found) == len(agent_ids):
                    return found
        return found

    def join_after(self, agent_id: str, call_id: str, spawn: int) -> int:
        candidates = [t for t, ack in self.results.get(call_id, ()) if t >= spawn and not ack]
        candidates += [t for t in self.notified.get(agent_id, ()) if t >= spawn]
        return min(candidates) if candidates else 0


def section_order(threads: list[Thread]) -> list[Thread]:
    """Sub-agent threads in section order (see the module docstring)."""
    def key(thread: Thread) -> tuple:
        depth = thread.record.spawn_depth
        started = thread.transcript.started_ns if thread.transcript else 0
        return (depth == 0, depth, started == 0, started, thread.agent_id)
    return sorted((t for t in threads if not t.is_main), key=key)


def place(threads: list[Thread]) -> dict[str, Placement]:
    """A :class:`Placement` for every sub-agent thread, keyed by agent id."""
    by_id = {t.agent_id: t for t in threads if t.transcript is not None}
    indexes: dict[str, _HostIndex] = {}
    placements: dict[str, Placement] = {}
    waiting: dict[str, list[str]] = {}  # host -> agents rung 1 did not place
    for thread in section_order(threads):
        agent = thread.agent_id
        placement = placements[agent] = Placement(agent)
        parent = thread.record.parent_agent_id
        if parent and (parent == agent or parent not in by_id):
            placement.parent_absent = True
            continue
        host = parent if parent else ""
        if host not in by_id:  # no main thread (or it could not be read)
            continue
        placement.host = host
        index = indexes.get(host)
        if index is None:
            index = indexes[host] = _HostIndex(by_id[host].transcript)
        call = thread.record.spawn_tool_use_id
        if call and call in index.call_turn:
            placement.spawn_turn = index.call_turn[call]
            placement.call_id = call
            placement.placed_by = RECORD
        else:
            waiting.setdefault(host, []).append(agent)
    for host, agents in waiting.items():
        index = indexes[host]
        for agent, (result_turn, call) in index.first_mentions(agents).items():
            placement = placements[agent]
            placement.spawn_turn = index.call_turn.get(call, result_turn)
            placement.call_id = call
            placement.placed_by = TRANSCRIPT
    for placement in placements.values():
        if placement.placed:
            placement.join_turn = indexes[placement.host].join_after(
                placement.agent_id, placement.call_id, placement.spawn_turn)
    return placements


def markers(placements: dict[str, Placement], order: list[str]
            ) -> dict[str, dict[int, list[tuple[str, str]]]]:
    """Per host thread, per turn, the ``(SPAWN|JOIN, agent id)`` markers rendered after
    that turn, in section order: spawns first, then joins. A spawn and join on the same
    turn collapse into the JOIN marker alone (the renderer words it as synchronous)."""
    out: dict[str, dict[int, list[tuple[str, str]]]] = {}
    for kind in (SPAWN, JOIN):
        for agent in order:
            p = placements[agent]
            if not p.placed:
                continue
            if kind == SPAWN and p.join_turn == p.spawn_turn:
                continue
            turn = p.spawn_turn if kind == SPAWN else p.join_turn
            if turn:
                out.setdefault(p.host, {}).setdefault(turn, []).append((kind, agent))
    return out
