"""The artefact: one self-contained Markdown document for one session.

Order (reference §6.4): header, ``## How to read this document``, ``## Completeness``,
``## Agent timeline`` (:mod:`.render_head`), then the body — ``## Main thread`` whole
and never spliced, each placed sub-agent's ``## Agent `<id>` `` section, then each
compaction agent's, and ``## Unattributed sub-agents`` last. The body is rendered first
so the completeness section can report what it elided.

Each agent section opens with its provenance: type (and where it came from when no
payload or sidecar named it), depth, spawner, spawn and join points (the join naming
the time of the line that carried the result), CONCURRENCY (host turns between spawn
and join), PARALLEL (the agents spawned in the same turn that ran at the same time, with
the overlap from the timeline), or — for a compaction agent — the ``[COMPACTED]``
marker it wrote the summary for.

Contracts: deterministic (the same inputs give the same bytes; no time of the run is
written — that lives in the telemetry alone); no absolute path is emitted (records are
named by basename); every non-literal label outside a fence goes through
:mod:`.fence`. Pure: :meth:`Document.render` returns the document as ``str``;
:meth:`Document.write` writes the same document, encoded, to a file as it is rendered.
"""

from __future__ import annotations

from .compaction import compaction_markers
from .fence import code, label
from .labels import (NOT_RECOVERABLE, PLACED_BY, TYPE_FROM, duration, host_name, point, span,
                     spawned_by, time_label)
from .placement import JOIN, SPAWN, Placement, markers
from .render_head import completeness, header, timeline
from .render_turns import TurnWriter, joined_marker, not_stored_marker, spawned_marker
from .schema import AgentTelemetry, Telemetry
from .selection import Thread
from .spill import Spill
from .values import when_key, when_ns

HOW_TO_READ = """\
## How to read this document

1. The main thread is contiguous. `## Main thread` holds its turns in the order they were recorded, and nothing is spliced into it; each sub-agent's transcript is appended after it in its own section.
2. Each sub-agent is marked twice in the thread that spawned it: a `[SPAWNED …]` line after the turn that issued its spawning tool call, and a `[JOINED …]` line after the turn its result reached. When both fall on one turn they collapse into one `[JOINED …]` line that says so. A `[JOINED …]` line names the time of the line that carried the result, which can be later than the time in its turn's heading (a turn of several tool-result lines is stamped with its first). An agent a thread spawned whose transcript is not stored is marked `[SPAWNED — transcript not stored]` and listed in `## Completeness` and the timeline. A compaction agent (the harness's own, `acompact…`) has no spawning call: its section names the `[COMPACTED]` marker it wrote the summary for, and that marker names its section. (In spine mode a marker that falls in an omitted stretch of a sub-agent is omitted with it; the agent's own section still names the turn.)
3. Section order asserts nothing about time. The `## Agent timeline` table, the markers and each agent's provenance lines (spawned at, joined at, CONCURRENCY, PARALLEL, compaction of) are the only statements this document makes about when things happened; `—` there means "could not be recovered", never "there was none".
4. Turn numbers count per thread, from 1: `main turn 7` and turn 7 of an agent are different moments. A turn is one user line or one API response (a response written as several lines is one turn; consecutive tool-result lines answering one response are one turn).
5. Thinking blocks are included as recorded, marked *thinking:*; their signatures are not. Images are named, not carried. `[COMPACTED]` marks where the harness compacted the model's context.
6. Everything here was redacted when it was stored; this document adds no transcript text the store does not hold, and records are named by file name only.
7. Everything inside a fence is something somebody said — a user, a model, a tool — reproduced verbatim. Everything outside a fence is this document: labels are single lines capped at 512 bytes, so every line outside a fence begins with words this document chose. A heading or marker inside a fence is quoted content and asserts nothing, however exactly it matches.

The structures this document asserts are: `## Completeness`, `## Agent timeline`, `## Main thread`, ``## Agent `<id>` ``, `## Unattributed sub-agents`, `### Turn <n> — …`, the `[SPAWNED …]`, `[SPAWNED — transcript not stored]`, `[JOINED …]` and `[COMPACTED]` markers, the spine-mode gap line `… N turn(s) omitted in spine mode …` and the per-block cap line `… [N bytes elided by the per-block cap]`.

"""

NO_MAIN_THREAD = (
    "No main-thread record for this session is stored, and abcd never saw its main file "
    "empty: the main thread was not captured. "
    "The sections below are the sub-agent transcripts that survived; nothing in this "
    "document can say where any of them was spawned by the main thread.\n\n")

EMPTY_MAIN_THREAD = (
    "The harness's main transcript file for this session was empty (zero bytes) when "
    "abcd saw it, so there was nothing to store: the main thread is EMPTY, not lost. "
    "The sections below are the sub-agent transcripts; nothing in this document can say "
    "where any of them was spawned by the main thread.\n\n")


class Document:
    """Renders one session. :meth:`render` returns the whole artefact and, as it goes,
    fills the telemetry's elision counts and notes (the artefact's own measures): call
    it once per telemetry."""

    def __init__(self, telemetry: Telemetry, threads: list[Thread], order: list[Thread],
                 placements: dict[str, Placement], *, max_block_bytes: int) -> None:
        self.t = telemetry
        self.main = next((t for t in threads if t.is_main), None)
        self.order = order
        self.placements = placements
        self.agents = {a.agent_id: a for a in telemetry.agents}
        self.max_block_bytes = max_block_bytes

    def sections(self) -> list[Thread]:
        """Sub-agent sections in document order: placed, compaction, unattributed."""
        placed = [t for t in self.order if self.placements[t.agent_id].placed]
        compaction = [t for t in self.order if self.placements[t.agent_id].is_compaction]
        rest = [t for t in self.order if t not in placed and t not in compaction]
        return placed + compaction + rest

    # -- body -------------------------------------------------------------------------
    def _markers(self) -> dict[str, dict[int, list[str]]]:
        """Per host thread, per turn, the marker lines rendered after that turn."""
        out: dict[str, dict[int, list[str]]] = {}
        for host, turns in markers(self.placements, [t.agent_id for t in self.order]).items():
            for turn, marks in turns.items():
                lines = out.setdefault(host, {}).setdefault(turn, [])
                for kind, agent in marks:
                    p, a = self.placements[agent], self.agents[agent]
                    if kind == SPAWN:
                        lines.append(spawned_marker(agent, a.agent_type))
                    elif kind == JOIN:
                        lines.append(joined_marker(agent, p.spawn_turn == p.join_turn,
                                                   p.join_when))
        for m in self.t.completeness.missing_agents:
            if m.spawned_at_turn:
                host = "" if m.spawned_in == "main" else m.spawned_in
                out.setdefault(host, {}).setdefault(m.spawned_at_turn, []).append(
                    not_stored_marker(m.agent_id, m.agent_type))
        return out

    def _body(self, parts) -> None:
        writer = TurnWriter(parts, max_block_bytes=self.max_block_bytes,
                            spine=self.t.mode == "spine")
        host_markers = self._markers()
        compactions = compaction_markers(self.placements)
        parts.append("## Main thread\n\n")
        if self.main is None:
            parts.append(EMPTY_MAIN_THREAD if self.t.completeness.main_thread_empty
                         else NO_MAIN_THREAD)
        else:
            parts.append(f"- record: {code(self.main.record.name)}\n\n")
            self._thread_body(writer, self.main, host_markers.get("", {}),
                              compactions.get("", {}), delegate=False)
        sections = self.sections()
        unplaced = [t for t in sections if not self.placements[t.agent_id].placed
                    and not self.placements[t.agent_id].is_compaction]
        for thread in sections:
            if unplaced and thread is unplaced[0]:
                parts.append("## Unattributed sub-agents\n\n")
                parts.append(
                    f"The {len(unplaced)} agent(s) below belong to this session, but "
                    "nothing stored says where in any thread they were spawned. They are "
                    "listed here, last and apart, rather than guessed into a thread.\n\n")
            self._agent(writer, thread, host_markers.get(thread.agent_id, {}),
                        compactions.get(thread.agent_id, {}))
        c = self.t.completeness
        c.elided_blocks = writer.elided_blocks
        c.elided_bytes = writer.elided_bytes
        c.omitted_turns = writer.omitted_turns
        if writer.omitted_turns:
            c.notes.append(
                f"spine mode omitted {writer.omitted_turns} sub-agent turn(s) from the "
                "artefact; run again with --mode full for the whole session")
        if writer.elided_blocks:
            c.notes.append(
                f"{writer.elided_blocks} tool input(s), result(s) or thinking block(s) were "
                f"truncated in the artefact at {self.max_block_bytes} bytes each "
                f"({writer.elided_bytes} bytes elided); the telemetry counts the whole "
                "transcript, not the truncated render")

    def _thread_body(self, writer: TurnWriter, thread: Thread, marks: dict[int, list[str]],
                     compactions: dict[int, str], *, delegate: bool) -> None:
        if thread.error:
            writer.parts.append(f"This record could not be read: {label(thread.error)}\n\n")
        elif thread.transcript is None or not thread.transcript.lines:
            writer.parts.append("This record is EMPTY: it holds no transcript lines.\n\n")
        elif not thread.transcript.turns:
            writer.parts.append("This record holds no conversation turns.\n\n")
        else:
            writer.thread(thread.transcript, marks, delegate=delegate, compactions=compactions)

    def _agent(self, writer: TurnWriter, thread: Thread, marks: dict[int, list[str]],
               compactions: dict[int, str]) -> None:
        a = self.agents[thread.agent_id]
        p = self.placements[thread.agent_id]
        out = writer.parts
        out.append(f"## Agent {code(a.agent_id)}\n\n")
        kind = label(a.agent_type) if a.agent_type else "— (not recorded)"
        if a.agent_type_source in TYPE_FROM:
            kind += f" ({TYPE_FROM[a.agent_type_source]})"
        out.append(f"- type: {kind}\n")
        out.append(f"- spawn depth: {a.spawn_depth or '— (not recorded)'}\n")
        out.append(f"- spawned by: {spawned_by(a, p)}\n")
        if p.is_compaction:
            out.append(self._compaction_line(a, p))
        else:
            out.extend(self._spawn_lines(a, p))
        attribution = label(a.spawn_attribution) if a.spawn_attribution else "— (not recorded)"
        if a.lineage_source:
            attribution += f" (lineage source: {label(a.lineage_source)})"
        out.append(f"- lineage attribution: {attribution}\n")
        out.append(f"- span: {span(a.started_at, a.ended_at, a.wall_clock_seconds)}\n")
        out.append(f"- turns: {a.turns.total}; tokens: {a.tokens.total} over "
                   f"{a.tokens.api_responses} API response(s)\n")
        out.append(f"- record: {code(a.record)}\n\n")
        self._thread_body(writer, thread, marks, compactions, delegate=True)

    def _spawn_lines(self, a: AgentTelemetry, p: Placement) -> list[str]:
        lines = []
        if p.placed:
            call = f"tool call {code(p.call_id)}, " if p.call_id else ""
            lines.append(f"- spawned at: {point(p.host, p.spawn_turn)} "
                         f"({call}{PLACED_BY[p.placed_by]})\n")
        else:
            lines.append(f"- spawned at: {NOT_RECOVERABLE} ({self._why_unplaced(a, p)})\n")
        if p.join_turn:
            at = (f" (the line carrying its result is stamped {time_label(a.joined_at)})"
                  if a.joined_at else "")
            lines.append(f"- joined at: {point(p.host, p.join_turn)}{at}\n")
        else:
            lines.append(f"- joined at: {NOT_RECOVERABLE}\n")
        if p.placed and p.join_turn > p.spawn_turn + 1:
            lines.append(f"- CONCURRENCY: {p.join_turn - p.spawn_turn - 1} turn(s) of "
                         f"{host_name(p.host or '')} ran between the spawn and the join, and "
                         "none of them had this agent's result\n")
        if a.concurrent_with:
            lines.append("- PARALLEL: spawned in the same turn as, and running at the same "
                         "time as, " + "; ".join(self._overlap(a, self.agents[b])
                                                 for b in a.concurrent_with) + "\n")
        return lines

    @staticmethod
    def _overlap(a: AgentTelemetry, b: AgentTelemetry) -> str:
        """`` `b` (overlap <start> → <end>, <duration>)`` from the two spans."""
        start, end = max(a.started_at, b.started_at), min(a.ended_at, b.ended_at)
        seconds = max(0, when_ns(when_key(end)) - when_ns(when_key(start))) / 1e9
        return (f"agent {code(b.agent_id)} (overlap {time_label(start)} → "
                f"{time_label(end)}, {duration(seconds)})")

    def _compaction_line(self, a: AgentTelemetry, p: Placement) -> str:
        host = host_name(p.host) if p.host is not None else "its thread"
        if p.compaction_turn:
            return (f"- compaction of: {host} — it wrote the summary announced by the "
                    f"[COMPACTED] marker before {point(p.host, p.compaction_turn)}; the "
                    "harness runs it itself, so no tool call spawns it\n")
        why = ("its thread is not in this set" if p.host is None else
               "no compaction boundary of that thread is stamped at or after its first line")
        return (f"- compaction of: {host}, by its id (acompact…); NOT linked to a "
                f"[COMPACTED] marker ({why})\n")

    def _why_unplaced(self, a: AgentTelemetry, p: Placement) -> str:
        parent = a.parent_agent_id
        if p.parent_absent:
            return f"its named parent {code(parent)} is not in this set"
        if p.host is None:
            if parent:
                return f"the record of its parent {code(parent)} could not be read"
            if self.main is None:
                return "no main-thread record is stored"
            return "the main-thread record could not be read"
        return "no stored spawn tool call, and no tool result in the spawning thread, names it"

    def _head(self) -> str:
        return "".join((header(self), HOW_TO_READ, completeness(self), timeline(self)))

    def render(self) -> str:
        body: list[str] = []
        self._body(body)
        return self._head() + "".join(body)

    def write(self, out, spill_dir=None) -> int:
        """Write the artefact's bytes (what ``render().encode("utf-8", "replace")``
        gives) to the binary file ``out``; returns how many. The body, rendered first
        (the head reports what it elided), is held in an anonymous temp file in
        ``spill_dir`` (the system's temp directory when None), not in memory."""
        with Spill(spill_dir) as body:
            self._body(body)
            head = self._head().encode("utf-8", "replace")
            out.write(head)
            return len(head) + body.copy_to(out)
