"""The head of the artefact: the header, ``## Completeness`` and ``## Agent timeline``.

Rules:
- The header and the completeness section state the counts the telemetry holds; every
  sub-agent a stored thread spawned whose transcript is not stored is listed by itself
  ("spawned, transcript not stored"), with the usage only its ``agent_progress`` copies
  carry stated in four figures and kept out of the totals.
- The timeline has one row per thread (the main thread, placed agents, compaction
  agents, unattributed agents, in that order) and one row per agent spawned but not
  stored; ten columns always. ``—`` means "could not be recovered".

Pure; each function returns ``str``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .fence import cell, code, code_cell, label
from .labels import NOT_STORED, point, span, spawned_by, time_label
from .schema import SCHEMA_VERSION, MissingAgent

if TYPE_CHECKING:
    from .render import Document


def _main_state(doc: "Document") -> str:
    c = doc.t.completeness
    if not c.main_thread_present:
        return ("EMPTY (the harness's main file was zero bytes when abcd saw it; no record)"
                if c.main_thread_empty else "ABSENT")
    if c.main_thread_empty:
        return "present, EMPTY (its record holds no transcript lines)"
    return "present"


def _missing_phrase(m: MissingAgent) -> str:
    who = f"agent {code(m.agent_id)}" if m.agent_id else "an agent whose id no line names"
    kind = f" ({label(m.agent_type)})" if m.agent_type else " (type not recorded)"
    where = point("" if m.spawned_in == "main" else m.spawned_in, m.spawned_at_turn)
    call = f" by tool call {code(m.spawn_tool_use_id)}" if m.spawn_tool_use_id else ""
    k = m.progress_tokens
    usage = (f"usage known only from {k.usage_lines_seen} agent_progress copy line(s) over "
             f"{k.api_responses} response(s): input {k.input}, output {k.output}, cache "
             f"creation {k.cache_creation_input}, cache read {k.cache_read_input} "
             f"({k.total} tokens, NOT in the totals)" if k.usage_lines_seen else
             "no usage of it is stored")
    spawned = f"spawned at {where}{call}" if m.spawned_at_turn else f"spawned{call}"
    return f"{who}{kind}, {spawned}: {NOT_STORED}; {usage}"


def header(doc: "Document") -> str:
    t, c = doc.t, doc.t.completeness
    subs = len(doc.order)
    more = (f"; {c.agents_spawned_not_stored} more spawned, transcript not stored"
            if c.agents_spawned_not_stored else "")
    return "".join((
        f"# Session {label(t.session_id)}\n\n",
        "This document reconstructs one captured session from the records stored for "
        "it: the main thread whole, then every stored sub-agent transcript in a "
        "section of its own. It is self-contained: records are named by file name "
        "only, and it carries no time of its own making.\n\n",
        f"- reconstruction schema: {SCHEMA_VERSION}\n",
        f"- session: {code(t.session_id)}\n",
        f"- root commit: {code(t.root_commit)}\n",
        f"- mode: {t.mode}\n",
        f"- main thread: {_main_state(doc)}\n",
        f"- agents: {c.agents_total} ({subs} sub-agent transcript(s) besides the main "
        f"thread{more})\n",
        f"- records used: {c.records_used} of {c.records_found} found\n",
        f"- span: {span(t.started_at, t.ended_at, t.wall_clock_seconds)}\n",
        f"- turns: {t.turns.total} ({t.turns.user} user, {t.turns.assistant} assistant)\n",
        f"- tokens: {t.tokens.total} over {t.tokens.api_responses} API response(s)\n",
        f"- telemetry: {code(t.session_id + '.telemetry.json')}\n\n",
    ))


def completeness(doc: "Document") -> str:
    c = doc.t.completeness
    n = len(doc.order)
    lines = [
        "## Completeness\n\nWhat this reconstruction knows it does not know.\n\n",
        f"- main-thread record: {_main_state(doc)}\n",
        f"- sub-agents with no recoverable spawn point: {c.agents_without_spawn_point} of "
        f"the {n} stored\n",
        f"- sub-agents with no recoverable join point: {c.agents_without_join_point} of "
        f"the {n} stored\n",
        f"- sub-agents whose lineage was never attributed: {c.agents_unattributed}\n",
        f"- sub-agents whose named parent is not in this set: "
        f"{c.agents_whose_parent_is_not_in_this_set}\n",
    ]
    if c.compaction_agents:
        lines.append(f"- compaction agents linked to their thread's [COMPACTED] marker: "
                     f"{c.compaction_agents_linked} of {c.compaction_agents}\n")
    lines.append(f"- sub-agents spawned whose transcript is not stored: "
                 f"{c.agents_spawned_not_stored}\n")
    for m in c.missing_agents:
        lines.append(f"  - {_missing_phrase(m)}\n")
    lines += [
        f"- unparseable transcript lines: {c.lines_unparseable} (a truncated capture "
        "shows as one, on its last line)\n",
        f"- unrecognised lines or blocks: {c.lines_unrecognised}\n",
        f"- responses whose usage could not be de-duplicated: {c.usage_without_message_id}\n",
        f"- responses with no stop reason on their last line: "
        f"{c.responses_without_stop_reason}\n",
    ]
    if c.absent_fields:
        lines.append(f"- measures no source line carried: {', '.join(c.absent_fields)}\n")
    for d in c.dropped_records:
        lines.append(f"- record NOT used: {code(d.record)} — {label(d.reason)}\n")
    for note in c.notes:
        lines.append(f"- note: {label(note)}\n")
    return "".join(lines) + "\n"


def _joined_cell(host: str | None, turn: int, when: str) -> str:
    where = point(host, turn, cells=True)
    return f"{where} · {time_label(when)}" if turn and when else where


def timeline(doc: "Document") -> str:
    c = doc.t.completeness
    if not doc.order and not c.missing_agents:
        return ("## Agent timeline\n\nThis session spawned no sub-agents: no stored thread "
                "holds a spawning tool call, and no sub-agent transcript is stored.\n\n")
    rows = ["## Agent timeline\n\n",
            "| agent | type | depth | parent | spawned | started | ended | joined | turns "
            "| tokens |\n",
            "|---|---|---|---|---|---|---|---|---:|---:|\n"]
    if doc.main is not None:
        a = doc.agents[""]
        rows.append(f"| main thread | — | 0 | — | — | {time_label(a.started_at)} | "
                    f"{time_label(a.ended_at)} | — | {a.turns.total} | {a.tokens.total} |\n")
    for thread in doc.sections():
        a = doc.agents[thread.agent_id]
        p = doc.placements[thread.agent_id]
        parent = (code_cell(a.parent_agent_id) if a.parent_agent_id else spawned_by(a, p))
        spawned = (point(p.host, p.spawn_turn, cells=True) if not p.compaction_turn else
                   f"compaction before {point(p.host, p.compaction_turn, cells=True)}")
        rows.append(
            f"| {code_cell(a.agent_id)} | {cell(a.agent_type) if a.agent_type else '—'} "
            f"| {a.spawn_depth or '—'} | {parent} | {spawned} | {time_label(a.started_at)} "
            f"| {time_label(a.ended_at)} | {_joined_cell(p.host, p.join_turn, a.joined_at)} "
            f"| {a.turns.total} | {a.tokens.total} |\n")
    for m in c.missing_agents:
        host = "" if m.spawned_in == "main" else m.spawned_in
        parent = ("main thread" if m.spawned_in == "main" else
                  code_cell(m.spawned_in) if m.spawned_in else "unknown")
        rows.append(
            f"| {code_cell(m.agent_id) if m.agent_id else '— (no id)'} "
            f"| {cell(m.agent_type) if m.agent_type else '—'} | — | {parent} "
            f"| {point(host if m.spawned_in else None, m.spawned_at_turn, cells=True)} "
            f"| {NOT_STORED} | — | — | — | — |\n")
    rows.append("\nIn this table `—` means \"could not be recovered\", never \"there was "
                f"none\". A row reading \"{NOT_STORED}\" is an agent a stored thread spawned "
                "whose own transcript is not in the store: nothing of it is rendered, and "
                "none of its usage is in the totals.\n\n")
    return "".join(rows)
