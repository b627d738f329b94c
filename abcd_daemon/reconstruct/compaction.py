"""Compaction agents: the harness's own sub-agents that write a compaction summary.

Claude Code writes each compaction of a thread's context as a sub-agent transcript,
``agent-acompact-<hex>.jsonl``, beside the others; no tool call spawns it. Its host is
found as for any agent (the named parent, else the main thread; see :mod:`.placement`),
and it is linked to that host's compaction boundary (the ``[COMPACTED]`` marker) by
time: the first boundary of the host, not yet linked to another compaction agent,
stamped at or after the agent's first line. Agents are taken in section order (start
time), so two compactions of one thread link to its two boundaries in order. An agent
or boundary with no usable time is never linked: the link would be a guess.

A linked agent's :attr:`~.placement.Placement.compaction_turn` is the host turn the
marker precedes; :func:`compaction_markers` gives each host's marker its agent, so the
marker and the agent's section name each other. Pure.
"""

from __future__ import annotations

from .model import marked_turns
from .placement import HostIndex, Placement
from .selection import Thread


def link_compactions(order: list[Thread], placements: dict[str, Placement],
                     indexes: dict[str, HostIndex]) -> None:
    """Set ``compaction_turn`` on every compaction agent that can be linked."""
    taken: dict[str, set[int]] = {}
    for thread in order:
        p = placements[thread.agent_id]
        if not p.is_compaction or p.host is None or thread.transcript is None:
            continue
        start = thread.transcript.first_when
        index = indexes.get(p.host)
        if not start or index is None:
            continue
        used = taken.setdefault(p.host, set())
        for turn in marked_turns(index.transcript):
            if (turn.compacted_before and turn.compacted_when and turn.index not in used
                    and turn.compacted_when >= start):
                p.compaction_turn = turn.index
                used.add(turn.index)
                break


def compaction_markers(placements: dict[str, Placement]) -> dict[str, dict[int, str]]:
    """Per host thread, per turn, the compaction agent whose summary that turn's
    ``[COMPACTED]`` marker announces."""
    out: dict[str, dict[int, str]] = {}
    for p in placements.values():
        if p.compaction_turn and p.host is not None:
            out.setdefault(p.host, {})[p.compaction_turn] = p.agent_id
    return out
