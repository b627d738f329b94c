"""Sub-agents that were spawned but whose transcript is not stored.

A spawn is named by a stored thread in one of three ways: a ``Task``/``Agent`` tool
call; a tool result (a launch acknowledgement or a result) whose structured
``toolUseResult.agentId`` or text (``agentId: <id>``) names the agent; an
``agent_progress`` line naming the agent and its spawning call. A spawn is COVERED when
a stored sub-agent was placed at that call, or when the agent it names is a stored
thread of this set. Every other spawn is reported once (per call id, else per agent
id), in thread order (main first, then section order) and turn order, with what is
known of it: agent id, type (the call's ``subagent_type``), where it was spawned.

The only usage known of a missing agent is its ``agent_progress`` copies in the host's
file. It is gathered by the telemetry's own rule (once per response id: input and cache
the largest seen, output the largest; usage with no id per line) and reported apart:
it is never part of the session's totals (a copy is never counted as usage). Pure.
"""

from __future__ import annotations

from .model import Progress
from .placement import HostIndex, Placement, spawn_type
from .schema import MissingAgent, TokenCounts
from .selection import Thread


def progress_responses(copies: list[Progress]) -> dict[str, tuple[Progress, list[int]]]:
    """The responses ``copies`` carry, by the telemetry's rule (module docstring): key
    (the response id, ``line:<n>`` for the n-th usage line with none) → (its first
    copy, [input, output, cache creation, cache read])."""
    out: dict[str, tuple[Progress, list[int]]] = {}
    lines = 0
    for copy in copies:
        if copy.usage is None:
            continue
        lines += 1
        key = copy.response or f"line:{lines}"
        first, seen = out.get(key, (copy, [0, 0, 0, 0]))
        out[key] = (first, [max(a, b) for a, b in zip(seen, copy.usage)])
    return out


def progress_tokens(copies: list[Progress]) -> TokenCounts:
    """The usage ``copies`` carry, counted by the telemetry's rule (module docstring)."""
    tokens = TokenCounts()
    tokens.usage_lines_seen = sum(1 for copy in copies if copy.usage is not None)
    responses = progress_responses(copies)
    for _first, (i, o, cc, cr) in responses.values():
        tokens.input += i
        tokens.output += o
        tokens.cache_creation_input += cc
        tokens.cache_read_input += cr
    tokens.api_responses = sum(1 for key in responses if not key.startswith("line:"))
    tokens.total = (tokens.input + tokens.output + tokens.cache_creation_input
                    + tokens.cache_read_input)
    return tokens


def _named_by_call(index: HostIndex, spawn_calls: set[str]) -> dict[str, str]:
    """call id -> the agent id a result or progress line names for it (a result's
    text is read only for spawn calls and launch acknowledgements)."""
    named: dict[str, str] = {}
    for agent, (_turn, call, _type) in index.named.items():
        named.setdefault(call, agent)
    for copy in index.transcript.progress:
        if copy.call:
            named.setdefault(copy.call, copy.agent)
    for call, agent, ack in index.result_names:
        if ack or call in spawn_calls:
            named.setdefault(call, agent)
    return named


def missing_agents(threads: list[Thread], order: list[Thread],
                   placements: dict[str, Placement],
                   indexes: dict[str, HostIndex]) -> list[MissingAgent]:
    """Every spawn no stored transcript answers (see the module docstring). Adds an
    index to ``indexes`` for every readable thread not indexed yet."""
    stored = {t.agent_id for t in threads if not t.is_main}
    covered_calls = {(p.host, p.call_id) for p in placements.values() if p.placed and p.call_id}
    hosts = [t for t in threads if t.is_main] + order
    out: list[MissingAgent] = []
    reported: set[str] = set()
    for host_thread in hosts:
        if host_thread.transcript is None:
            continue
        host = host_thread.agent_id
        index = indexes.get(host)
        if index is None:
            index = indexes[host] = HostIndex(host_thread.transcript)
        calls = index.spawn_calls
        named = _named_by_call(index, set(calls))
        copies: dict[str, list[Progress]] = {}
        for copy in index.transcript.progress:
            copies.setdefault(copy.agent, []).append(copy)
        spawns = [(turn, call, named.get(call, ""), spawn_type(raw))
                  for call, (turn, raw) in calls.items()]
        spawns += [(index.call_turn.get(call, 0), call, agent, "")
                   for call, agent in sorted(named.items()) if call not in calls]
        spawns += [(0, "", agent, "") for agent in sorted(copies)
                   if agent not in named.values()]  # progress naming no call
        spawns.sort(key=lambda s: (s[0] == 0, s[0], s[1]))
        for turn, call, agent, kind in spawns:
            if (host, call) in covered_calls or (agent and agent in stored):
                continue
            key = agent or f"call:{host}:{call}"
            if key in reported:
                continue
            reported.add(key)
            out.append(MissingAgent(
                agent_id=agent, agent_type=kind, spawned_in=(host or "main") if turn else "",
                spawned_at_turn=turn, spawn_tool_use_id=call,
                progress_tokens=progress_tokens(copies.get(agent, [])) if agent
                else TokenCounts()))
    return out
