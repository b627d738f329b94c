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
  rung 2 (``placed_by: transcript``) — the host's own lines name the agent beside a
  tool-call id: first a tool result whose structured ``toolUseResult.agentId`` is the
  agent (2.0.x names it nowhere else), then an ``agent_progress`` line naming the agent
  and its ``parentToolUseID``, then the first tool result whose text names the agent
  id (as a whole word). The call's turn is the spawn point, or the result's own turn
  when the call itself is not in the host.
- Join point: the first host turn at or after the spawn where the agent's result
  reached the thread — the spawn call's own result, unless that result only
  acknowledges a background launch; or a notification (task notification, completed
  ``TaskOutput``) naming the agent. Its time is the time of the LINE that carried the
  result (a turn of several result lines is stamped with its first). None found: not
  recoverable, counted.
- Agent type: the record's own (hook payload or sidecar, ``type_source: record``);
  else, for a placed agent, the spawning call's ``subagent_type`` input
  (``spawn call``); else the structured result's ``agentType`` (``tool result``).
- Compaction agents (ids ``acompact…``, :func:`is_compaction`) are spawned by the
  harness, not by a tool call: they are linked by :mod:`.compaction` instead, and
  never searched for here.

Pure.
"""

from __future__ import annotations

import ahocorasick_rs
import msgspec

from .lean import mentions_in, named_in
from .model import TOOL_RESULT, TOOL_USE, Transcript, marked_turns
from .selection import Thread

RECORD = "record"
TRANSCRIPT = "transcript"
#: Where an agent's type came from.
TYPE_RECORD = "record"
TYPE_CALL = "spawn call"
TYPE_RESULT = "tool result"
SPAWN = "spawn"
JOIN = "join"

#: Characters that continue an id: a match flanked by one is part of a longer word.


class Placement:
    """Where one sub-agent sits. ``host`` is the host thread's agent id (``""`` for the
    main thread) or None when there is no host; turns are 1-based, 0 when unknown;
    ``join_when`` the time key of the line that carried its result; ``agent_type`` and
    ``type_source`` the type as resolved (see the module docstring);
    ``compaction_turn`` the host turn a compaction agent's ``[COMPACTED]`` marker
    precedes (0 when not linked)."""

    __slots__ = ("agent_id", "host", "parent_absent", "spawn_turn", "join_turn",
                 "join_when", "call_id", "placed_by", "agent_type", "type_source",
                 "compaction_turn")

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self.host: str | None = None
        self.parent_absent = False
        self.spawn_turn = 0
        self.join_turn = 0
        self.join_when = ""
        self.call_id = ""
        self.placed_by = ""
        self.agent_type = ""
        self.type_source = ""
        self.compaction_turn = 0

    @property
    def placed(self) -> bool:
        return self.spawn_turn > 0

    @property
    def is_compaction(self) -> bool:
        return is_compaction(self.agent_id)

    @property
    def spawned_in(self) -> str:
        """``main``, the parent agent id, or ``""`` when unplaced."""
        if not self.placed:
            return ""
        return self.host or "main"


def is_compaction(agent_id: str) -> bool:
    """Whether ``agent_id`` names a harness compaction agent (``acompact…``)."""
    return agent_id.startswith("acompact")


def spawn_type(raw: bytes) -> str:
    """The ``subagent_type`` a spawning call's input names ("" when none)."""
    if b"subagent_type" not in raw:
        return ""
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return ""
    kind = value.get("subagent_type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else ""


#: Tool names that spawn a sub-agent (``Task`` before 2.1, ``Agent`` since).
SPAWN_TOOLS = frozenset({"Task", "Agent"})


class HostIndex:
    """One host thread's tool calls, tool results, notifications and progress copies,
    indexed once."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.call_turn: dict[str, int] = {}
        self.call_input: dict[str, bytes] = {}
        self.results: dict[str, list[tuple[int, bool, str]]] = {}  # call -> (turn, ack, when)
        self.named: dict[str, tuple[int, str, str]] = {}  # agent -> (turn, call, agentType)
        self.notified: dict[str, list[tuple[int, str]]] = {}
        self.progress_call: dict[str, str] = {}
        #: Spawning calls (:data:`SPAWN_TOOLS`): call id -> (turn, input), the last
        #: such call of an id; and (call id, agent id, launch acknowledgement?) of each
        #: tool result whose text names an agent (``agentId: <id>``), in order.
        self.spawn_calls: dict[str, tuple[int, bytes]] = {}
        self.result_names: list[tuple[str, str, bool]] = []
        for turn in marked_turns(transcript):
            for agent, when in turn.notified:
                self.notified.setdefault(agent, []).append((turn.index, when))
            for block in turn.blocks:
                if block.kind == TOOL_USE and block.ref:
                    self.call_turn.setdefault(block.ref, turn.index)
                    self.call_input.setdefault(block.ref, block.raw)
                    if block.name in SPAWN_TOOLS:
                        self.spawn_calls[block.ref] = (turn.index, block.raw)
                elif block.kind == TOOL_RESULT and block.ref:
                    self.results.setdefault(block.ref, []).append(
                        (turn.index, block.async_ack, block.when))
                    if block.agent:
                        self.named.setdefault(block.agent,
                                              (turn.index, block.ref, block.agent_type))
                    agent = block.named if block.line >= 0 else named_in(block.text)
                    if agent:
                        self.result_names.append((block.ref, agent, block.async_ack))
        for copy in transcript.progress:
            if copy.call in self.call_turn:
                self.progress_call.setdefault(copy.agent, copy.call)

    def first_mentions(self, agent_ids: list[str]) -> dict[str, tuple[int, str]]:
        """For each agent id, the first tool result naming it: (turn, tool_use_id). A
        lean block's mentions were found when its line was read (:mod:`.lean`)."""
        found: dict[str, tuple[int, str]] = {}
        if not agent_ids:
            return found
        wanted = set(agent_ids)
        matcher = None
        for turn in marked_turns(self.transcript):
            for block in turn.blocks:
                if block.kind != TOOL_RESULT:
                    continue
                if block.line >= 0:
                    named = [a for a in block.mentions if a in wanted]
                elif block.text:
                    if matcher is None:
                        matcher = ahocorasick_rs.AhoCorasick(agent_ids)
                    named = mentions_in(matcher, agent_ids, block.text)
                else:
                    continue
                for agent in named:
                    if agent not in found:
                        found[agent] = (turn.index, block.ref)
                if len(found) == len(agent_ids):
                    return found
        return found

    def join_after(self, agent_id: str, call_id: str, spawn: int) -> tuple[int, str]:
        """(turn, time key of the line) where the agent's result first reached the
        host at or after ``spawn``; (0, "") when none did."""
        candidates = [(t, when) for t, ack, when in self.results.get(call_id, ())
                      if t >= spawn and not ack]
        candidates += [(t, when) for t, when in self.notified.get(agent_id, ()) if t >= spawn]
        return min(candidates) if candidates else (0, "")


def section_order(threads: list[Thread]) -> list[Thread]:
    """Sub-agent threads in section order (see the module docstring)."""
    def key(thread: Thread) -> tuple:
        depth = thread.record.spawn_depth
        started = thread.transcript.started_ns if thread.transcript else 0
        return (depth == 0, depth, started == 0, started, thread.agent_id)
    return sorted((t for t in threads if not t.is_main), key=key)


def place(threads: list[Thread]) -> tuple[dict[str, Placement], dict[str, HostIndex]]:
    """A :class:`Placement` for every sub-agent thread, keyed by agent id, and the index
    of every host thread that was searched (keyed like :attr:`Placement.host`)."""
    by_id = {t.agent_id: t for t in threads if t.transcript is not None}
    indexes: dict[str, HostIndex] = {}
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
            index = indexes[host] = HostIndex(by_id[host].transcript)
        if placement.is_compaction:
            continue  # linked by .compaction, never by a tool call
        call = thread.record.spawn_tool_use_id
        if call and call in index.call_turn:
            placement.spawn_turn = index.call_turn[call]
            placement.call_id = call
            placement.placed_by = RECORD
        else:
            waiting.setdefault(host, []).append(agent)
    for host, agents in waiting.items():
        index = indexes[host]
        found: dict[str, tuple[int, str]] = {}
        for agent in agents:
            if agent in index.named:
                found[agent] = index.named[agent][:2]
            elif agent in index.progress_call:
                call = index.progress_call[agent]
                found[agent] = (index.call_turn[call], call)
        found.update(index.first_mentions([a for a in agents if a not in found]))
        for agent, (result_turn, call) in found.items():
            placement = placements[agent]
            placement.spawn_turn = index.call_turn.get(call, result_turn)
            placement.call_id = call
            placement.placed_by = TRANSCRIPT
    for thread in threads:
        if thread.is_main:
            continue
        placement = placements[thread.agent_id]
        if placement.placed:
            index = indexes[placement.host]
            placement.join_turn, placement.join_when = index.join_after(
                placement.agent_id, placement.call_id, placement.spawn_turn)
        _type(placement, thread.record.agent_type, indexes.get(placement.host or ""))
    return placements, indexes


def _type(placement: Placement, recorded: str, index: HostIndex | None) -> None:
    """Resolve the agent's type (see the module docstring)."""
    if recorded:
        placement.agent_type, placement.type_source = recorded, TYPE_RECORD
        return
    if index is None or not placement.placed:
        return
    from_call = spawn_type(index.call_input.get(placement.call_id, b""))
    if from_call:
        placement.agent_type, placement.type_source = from_call, TYPE_CALL
        return
    named = index.named.get(placement.agent_id)
    if named and named[2]:
        placement.agent_type, placement.type_source = named[2], TYPE_RESULT


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
