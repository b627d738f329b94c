"""Telemetry: what the session cost, counted honestly, and what the count could not see.

The counting rule (issue iss-2609090723027424): the harness writes one line per content
block and repeats the response's usage on each, so tokens are counted ONCE PER RESPONSE
ID, never per line (the adapters gather a response's usage; see :mod:`.model`).
Across threads the same rule holds: a response, a turn (keyed by response id or line
uuid) or a tool call (keyed by its block id) is counted once, in the first thread that
carries it, sub-agents before the main thread — so a copy of a sub-agent's responses in
the main file never counts twice. Usage with no response id is counted per line
(dropping it would understate), tallied, and noted: the one way totals can be inflated.

Everything here is computed from whole transcripts, before any elision or spine
reduction; the renderer fills ``elided_*``/``omitted_turns`` afterwards. Pure.
"""

from __future__ import annotations

from ..store.record import format_rfc3339_ns
from .model import ASSISTANT, USER, Transcript
from .values import when_ns
from .placement import Placement
from .schema import (SCHEMA_VERSION, AgentTelemetry, Completeness, DroppedRecord,
                     MissingAgent, Telemetry, TokenCounts, TurnCounts)
from .selection import Thread

#: Counted instead of a tool name when a call carries none.
UNNAMED_TOOL = "(unnamed)"


class _Claims:
    """Keys already counted somewhere in this session."""

    def __init__(self) -> None:
        self.responses: set[str] = set()
        self.turns: set[str] = set()
        self.tools: set[str] = set()


def _stamp(key: str) -> str:
    """RFC 3339 (UTC, fraction trimmed) for a sortable time key; "" for none."""
    if not key:
        return ""
    fraction = key[20:].rstrip("0")
    return key[:19] + (f".{fraction}" if fraction else "") + "Z"


def _seconds(first: str, last: str) -> float:
    """Seconds from ``first`` to ``last``; 0.0 when either is not a real time."""
    start, end = when_ns(first), when_ns(last)
    if not start or not end or end < start:
        return 0.0
    return round((end - start) / 1e9, 3)


def _count(t: Transcript, claims: _Claims) -> tuple[TurnCounts, TokenCounts, dict[str, int],
                                                     int, int]:
    """(turns, tokens, tool calls, responses without stop reason, copied responses)."""
    tokens = TokenCounts(usage_lines_seen=t.usage_lines)
    no_stop = copied = 0
    for rid, r in t.responses.items():
        if rid in claims.responses:
            copied += 1
            continue
        claims.responses.add(rid)
        if r.has_usage:
            tokens.input += r.input
            tokens.output += r.output
            tokens.cache_creation_input += r.cache_creation
            tokens.cache_read_input += r.cache_read
            tokens.api_responses += 1
            if not r.stopped:
                no_stop += 1
    for i, o, cc, cr in t.anonymous_usage:
        tokens.input += i
        tokens.output += o
        tokens.cache_creation_input += cc
        tokens.cache_read_input += cr
    tokens.total = (tokens.input + tokens.output + tokens.cache_creation_input
                    + tokens.cache_read_input)
    turns = TurnCounts()
    table = getattr(t.turns, "keys_and_roles", None)  # a lean transcript's columns
    for key, role in table() if table else ((turn.key, turn.role) for turn in t.turns):
        if key:
            if key in claims.turns:
                continue
            claims.turns.add(key)
        if role == USER:
            turns.user += 1
        elif role == ASSISTANT:
            turns.assistant += 1
    turns.total = turns.user + turns.assistant
    tools: dict[str, int] = {}
    for block_id, name in t.tool_calls:
        if block_id:
            if block_id in claims.tools:
                continue
            claims.tools.add(block_id)
        name = name or UNNAMED_TOOL
        tools[name] = tools.get(name, 0) + 1
    return turns, tokens, tools, no_stop, copied


def _agent(thread: Thread, placement: Placement | None, claims: _Claims) -> AgentTelemetry:
    record = thread.record
    t = thread.transcript or Transcript("")
    turns, tokens, tools, no_stop, copied = _count(t, claims)
    p = placement or Placement(record.agent_id)
    agent_type, type_source = ((p.agent_type, p.type_source) if placement is not None
                               else (record.agent_type, ""))
    return AgentTelemetry(
        agent_id=record.agent_id, is_main_thread=thread.is_main,
        parent_agent_id=record.parent_agent_id, agent_type=agent_type,
        agent_type_source=type_source, spawn_depth=record.spawn_depth, spawn_attribution=record.spawn_attribution,
        lineage_source=record.lineage_source, adopted_project=record.adopted_project,
        record=record.name, harness=t.harness, started_at=_stamp(t.first_when),
        ended_at=_stamp(t.last_when), wall_clock_seconds=_seconds(t.first_when, t.last_when),
        turns=turns, tokens=tokens, tool_calls=dict(sorted(tools.items())),
        models=sorted(t.models), spawned_in=p.spawned_in, spawned_at_turn=p.spawn_turn,
        joined_at_turn=p.join_turn, joined_at=_stamp(p.join_when),
        spawn_tool_use_id=record.spawn_tool_use_id, placed_by=p.placed_by,
        compaction_of=(p.host or "main") if p.is_compaction and p.host is not None else "",
        compacted_at_turn=p.compaction_turn, lines=t.lines, lines_unparseable=t.unparseable,
        lines_unrecognised=t.unrecognised,
        usage_without_message_id=len(t.anonymous_usage),
        responses_without_stop_reason=no_stop, copied_lines=t.copied_lines + copied)


def _notes(c: Completeness, t: Telemetry, orphan_copies: int) -> list[str]:
    notes = []
    if not c.main_thread_present:
        notes.append(
            "no main-thread record for this session is stored, so no spawn point or join "
            "point can be established for any agent the main thread spawned; the "
            "sub-agent transcripts are what survived")
    if c.usage_without_message_id:
        notes.append(
            f"{c.usage_without_message_id} usage line(s) carried no response id and were "
            "counted once per line; the token totals are an upper bound to that extent")
    if c.responses_without_stop_reason:
        notes.append(
            f"{c.responses_without_stop_reason} of {t.tokens.api_responses} API "
            "response(s) have no stop reason on their last line (written before the "
            "response finished, or a truncated capture); their output tokens are the "
            "largest value any of their lines carried, which may be a streaming "
            "placeholder")
    if c.copied_lines - orphan_copies > 0:
        notes.append(
            f"{c.copied_lines - orphan_copies} line(s) or response(s) copy the responses "
            "of a stored thread (agent_progress lines, sidechain copies); each response "
            "is counted once, in the thread that owns it")
    for m in c.missing_agents:
        k = m.progress_tokens
        if k.usage_lines_seen:
            who = f"agent {m.agent_id}" if m.agent_id else "an agent with no id"
            notes.append(
                f"{k.usage_lines_seen} agent_progress line(s) copy {k.api_responses} "
                f"response(s) of {who}, whose own transcript is not stored: input "
                f"{k.input}, output {k.output}, cache creation {k.cache_creation_input}, "
                f"cache read {k.cache_read_input} ({k.total} tokens) — counted nowhere "
                "in the totals above, stated here apart")
    if c.lines_unrecognised:
        notes.append(
            f"{c.lines_unrecognised} line(s) or block(s) have a shape this "
            "reconstruction does not recognise; they are counted here and not rendered")
    if c.lines_not_utf8:
        notes.append(
            f"{c.lines_not_utf8} line(s) were not valid UTF-8 (or escaped an unpaired "
            "surrogate) and were read with replacement characters")
    return notes


def _overlap(a: AgentTelemetry, b: AgentTelemetry) -> bool:
    return bool(a.started_at and b.started_at and a.ended_at and b.ended_at
                and a.started_at <= b.ended_at and b.started_at <= a.ended_at)


def _concurrency(agents: list[AgentTelemetry]) -> None:
    """``concurrent_with``: the other agents spawned in the same host turn whose spans
    overlap this one's on the timeline."""
    groups: dict[tuple[str, int], list[AgentTelemetry]] = {}
    for a in agents:
        if a.spawned_at_turn:
            groups.setdefault((a.spawned_in, a.spawned_at_turn), []).append(a)
    for group in groups.values():
        for a in group:
            a.concurrent_with = [b.agent_id for b in group if b is not a and _overlap(a, b)]


def measure(session_id: str, root_sha: str, mode: str, now_ns: int, threads: list[Thread],
            order: list[Thread], placements: dict[str, Placement],
            dropped: list[DroppedRecord], records_found: int,
            missing: list[MissingAgent] | None = None,
            empty_main: bool = False) -> Telemetry:
    """The telemetry of a session; ``order`` is the sub-agents in section order,
    ``missing`` the spawned sub-agents with no stored transcript (:mod:`.spawns`),
    ``empty_main`` whether the harness's main file was seen zero bytes (only consulted
    when no main-thread record is stored).
    Agents are listed main thread first, then in section order."""
    claims = _Claims()
    main = [t for t in threads if t.is_main]
    agents = {t.agent_id: _agent(t, placements.get(t.agent_id), claims) for t in order}
    listed = [_agent(main[0], None, claims)] if main else []
    listed += [agents[t.agent_id] for t in order]
    _concurrency(listed)
    turns, tokens, tools = TurnCounts(), TokenCounts(), {}
    for a in listed:
        turns.user += a.turns.user
        turns.assistant += a.turns.assistant
        tokens.add(a.tokens)
        for name, n in a.tool_calls.items():
            tools[name] = tools.get(name, 0) + n
    turns.total = turns.user + turns.assistant
    transcripts = [t.transcript for t in threads if t.transcript is not None]
    firsts = [t.first_when for t in transcripts if t.first_when]
    lasts = [t.last_when for t in transcripts if t.last_when]
    first, last = (min(firsts) if firsts else ""), (max(lasts) if lasts else "")
    subs = [t.record for t in order]
    missing = missing or []
    linked = [placements[r.agent_id].placed or bool(placements[r.agent_id].compaction_turn)
              for r in subs]
    c = Completeness(
        main_thread_present=bool(main),
        main_thread_empty=(bool(main) and not main[0].error and (
            main[0].transcript is None or main[0].transcript.lines == 0))
        or (not main and empty_main),
        records_found=records_found,
        records_used=len(threads), dropped_records=dropped, agents_total=len(threads),
        agents_unattributed=sum(r.spawn_attribution in ("", "unattributed") for r in subs),
        agents_without_spawn_point=sum(not ok for ok in linked),
        agents_without_join_point=sum(
            not placements[r.agent_id].join_turn and not placements[r.agent_id].compaction_turn
            for r in subs),
        agents_without_agent_type=sum(not agents[r.agent_id].agent_type for r in subs),
        agents_whose_parent_is_not_in_this_set=sum(
            placements[r.agent_id].parent_absent for r in subs),
        compaction_agents=sum(placements[r.agent_id].is_compaction for r in subs),
        compaction_agents_linked=sum(bool(placements[r.agent_id].compaction_turn)
                                     for r in subs),
        agents_spawned_not_stored=len(missing), missing_agents=missing,
        lines_unparseable=sum(t.unparseable for t in transcripts),
        lines_unrecognised=sum(t.unrecognised for t in transcripts),
        lines_not_utf8=sum(t.not_utf8 for t in transcripts),
        usage_without_message_id=sum(a.usage_without_message_id for a in listed),
        responses_without_stop_reason=sum(a.responses_without_stop_reason for a in listed),
        copied_lines=sum(a.copied_lines for a in listed),
        elided_blocks=0, elided_bytes=0, omitted_turns=0)
    c.absent_fields = [name for name, absent in (
        ("tokens", not any(t.usage_lines for t in transcripts)),
        ("tool_calls", not any(t.tool_calls for t in transcripts)),
        ("models", not any(t.models for t in transcripts)),
        ("agent_types", bool(subs) and not any(agents[r.agent_id].agent_type for r in subs)),
        ("timestamps", not first),
    ) if absent]
    telemetry = Telemetry(
        schema_version=SCHEMA_VERSION, session_id=session_id, root_commit=root_sha,
        mode=mode, generated_at=format_rfc3339_ns(now_ns), started_at=_stamp(first),
        ended_at=_stamp(last), wall_clock_seconds=_seconds(first, last), turns=turns,
        tokens=tokens, tool_calls=dict(sorted(tools.items())),
        models=sorted({m for t in transcripts for m in t.models}),
        agent_types=sorted({agents[r.agent_id].agent_type for r in subs
                            if agents[r.agent_id].agent_type}),
        agents=listed, completeness=c)
    missing_ids = {m.agent_id for m in missing if m.agent_id}
    c.notes = _notes(c, telemetry, sum(p.agent in missing_ids for t in transcripts
                                       for p in t.progress))
    return telemetry
