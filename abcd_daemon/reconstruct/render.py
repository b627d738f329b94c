"""The artefact: one self-contained Markdown document for one session.

Order (reference §6.4): header, ``## How to read this document``, ``## Completeness``,
``## Agent timeline``, then the body — ``## Main thread`` whole and never spliced, each
placed sub-agent's ``## Agent `<id>` `` section, and ``## Unattributed sub-agents`` last.
The body is rendered first so the completeness section can report what it elided.

Contracts: deterministic (the same inputs give the same bytes; no time of the run is
written — that lives in the telemetry alone); no absolute path is emitted (records are
named by basename); every non-literal label outside a fence goes through
:mod:`.fence`. Pure; returns the document as ``str``.
"""

from __future__ import annotations

from .fence import cell, code, code_cell, label
from .placement import RECORD, Placement, markers
from .render_turns import TurnWriter
from .schema import SCHEMA_VERSION, AgentTelemetry, Telemetry
from .selection import Thread
from .spans import duration

NOT_RECOVERABLE = "NOT RECOVERABLE from what is stored"
_PLACED_BY = {
    RECORD: "placed by the record's stored spawn tool call",
    "transcript": "placed by the spawning transcript's own tool result",
}

HOW_TO_READ = """\
## How to read this document

1. The main thread is contiguous. `## Main thread` holds its turns in the order they were recorded, and nothing is spliced into it; each sub-agent's transcript is appended after it in its own section.
2. Each sub-agent is marked twice in the thread that spawned it: a `[SPAWNED …]` line after the turn that issued its spawning tool call, and a `[JOINED …]` line after the turn its result reached. When both fall on one turn they collapse into one `[JOINED …]` line that says so. (In spine mode a marker that falls in an omitted stretch of a sub-agent is omitted with it; the agent's own section still names the turn.)
3. Section order asserts nothing about time. The `## Agent timeline` table, the markers and each agent's provenance lines (spawned at, joined at, CONCURRENCY) are the only statements this document makes about when things happened; `—` there means "could not be recovered", never "there was none".
4. Turn numbers count per thread, from 1: `main turn 7` and turn 7 of an agent are different moments. A turn is one user line or one API response (a response written as several lines is one turn; consecutive tool-result lines answering one response are one turn).
5. Thinking blocks are included as recorded, marked *thinking:*; their signatures are not. Images are named, not carried. `[COMPACTED]` marks where the harness compacted the model's context.
6. Everything here was redacted when it was stored; this document adds no transcript text the store does not hold, and records are named by file name only.
7. Everything inside a fence is something somebody said — a user, a model, a tool — reproduced verbatim. Everything outside a fence is this document: labels are single lines capped at 512 bytes, so every line outside a fence begins with words this document chose. A heading or marker inside a fence is quoted content and asserts nothing, however exactly it matches.

The structures this document asserts are: `## Completeness`, `## Agent timeline`, `## Main thread`, ``## Agent `<id>` ``, `## Unattributed sub-agents`, `### Turn <n> — …`, the `[SPAWNED …]`, `[JOINED …]` and `[COMPACTED]` markers, the spine-mode gap line `… N turn(s) omitted in spine mode …` and the per-block cap line `… [N bytes elided by the per-block cap]`.

"""

NO_MAIN_THREAD = (
    "No main-thread record for this session is stored. The sections below are the "
    "sub-agent transcripts that survived; nothing in this document can say where any "
    "of them was spawned by the main thread.\n\n")


def _time(stamp: str) -> str:
    return stamp[:19] + "Z" if stamp else "—"


def _span(first: str, last: str, seconds: float) -> str:
    if not first:
        return "—"
    return f"{_time(first)} → {_time(last)} ({duration(seconds)})"


def _point(host: str | None, turn: int, *, cells: bool = False) -> str:
    if not turn or host is None:
        return "—"
    if not host:
        return f"main turn {turn}"
    return f"{code_cell(host) if cells else code(host)} turn {turn}"


def _spawned_by(a: AgentTelemetry, p: Placement) -> str:
    if a.parent_agent_id:
        return code(a.parent_agent_id)
    if p.placed or a.spawn_attribution in ("sidecar", "transcript"):
        return "main thread"
    return "unknown"


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

    # -- body -------------------------------------------------------------------------
    def _body(self) -> list[str]:
        parts: list[str] = []
        writer = TurnWriter(parts, max_block_bytes=self.max_block_bytes,
                            spine=self.t.mode == "spine", placements=self.placements,
                            agent_types={t.agent_id: t.record.agent_type for t in self.order})
        ids = [t.agent_id for t in self.order]
        host_markers = markers(self.placements, ids)
        parts.append("## Main thread\n\n")
        if self.main is None:
            parts.append(NO_MAIN_THREAD)
        else:
            parts.append(f"- record: {code(self.main.record.name)}\n\n")
            self._thread_body(writer, self.main, host_markers.get("", {}), delegate=False)
        placed = [t for t in self.order if self.placements[t.agent_id].placed]
        unplaced = [t for t in self.order if not self.placements[t.agent_id].placed]
        for thread in placed:
            self._agent(writer, thread, host_markers)
        if unplaced:
            parts.append("## Unattributed sub-agents\n\n")
            parts.append(
                f"The {len(unplaced)} agent(s) below belong to this session, but nothing "
                "stored says where in any thread they were spawned. They are listed here, "
                "last and apart, rather than guessed into a thread.\n\n")
            for thread in unplaced:
                self._agent(writer, thread, host_markers)
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
        return parts

    def _thread_body(self, writer: TurnWriter, thread: Thread,
                     marks: dict[int, list[tuple[str, str]]], *, delegate: bool) -> None:
        if thread.error:
            writer.parts.append(f"This record could not be read: {label(thread.error)}\n\n")
        elif thread.transcript is None or not thread.transcript.turns:
            writer.parts.append("This record holds no conversation turns.\n\n")
        else:
            writer.thread(thread.transcript, marks, delegate=delegate)

    def _agent(self, writer: TurnWriter, thread: Thread,
               host_markers: dict[str, dict[int, list[tuple[str, str]]]]) -> None:
        a = self.agents[thread.agent_id]
        p = self.placements[thread.agent_id]
        out = writer.parts
        out.append(f"## Agent {code(a.agent_id)}\n\n")
        out.append(f"- type: {label(a.agent_type) if a.agent_type else '— (not recorded)'}\n")
        out.append(f"- spawn depth: {a.spawn_depth or '— (not recorded)'}\n")
        out.append(f"- spawned by: {_spawned_by(a, p)}\n")
        if p.placed:
            call = f"tool call {code(p.call_id)}, " if p.call_id else ""
            out.append(f"- spawned at: {_point(p.host, p.spawn_turn)} "
                       f"({call}{_PLACED_BY[p.placed_by]})\n")
        else:
            why = self._why_unplaced(a, p)
            out.append(f"- spawned at: {NOT_RECOVERABLE} ({why})\n")
        if p.join_turn:
            out.append(f"- joined at: {_point(p.host, p.join_turn)}\n")
        else:
            out.append(f"- joined at: {NOT_RECOVERABLE}\n")
        if p.placed and p.join_turn > p.spawn_turn + 1:
            host = "the main thread" if not p.host else f"agent {code(p.host)}"
            out.append(f"- CONCURRENCY: {p.join_turn - p.spawn_turn - 1} turn(s) of {host} "
                       "ran between the spawn and the join, and none of them had this "
                       "agent's result\n")
        attribution = label(a.spawn_attribution) if a.spawn_attribution else "— (not recorded)"
        if a.lineage_source:
            attribution += f" (lineage source: {label(a.lineage_source)})"
        out.append(f"- lineage attribution: {attribution}\n")
        out.append(f"- span: {_span(a.started_at, a.ended_at, a.wall_clock_seconds)}\n")
        out.append(f"- turns: {a.turns.total}; tokens: {a.tokens.total} over "
                   f"{a.tokens.api_responses} API response(s)\n")
        out.append(f"- record: {code(a.record)}\n\n")
        self._thread_body(writer, thread, host_markers.get(thread.agent_id, {}),
                          delegate=True)

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

    # -- head -------------------------------------------------------------------------
    def _header(self) -> str:
        t, c = self.t, self.t.completeness
        subs = len(self.order)
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
            f"- main thread: {'present' if c.main_thread_present else 'ABSENT'}\n",
            f"- agents: {c.agents_total} ({subs} sub-agent transcript(s) besides the main "
            "thread)\n",
            f"- records used: {c.records_used} of {c.records_found} found\n",
            f"- span: {_span(t.started_at, t.ended_at, t.wall_clock_seconds)}\n",
            f"- turns: {t.turns.total} ({t.turns.user} user, {t.turns.assistant} assistant)\n",
            f"- tokens: {t.tokens.total} over {t.tokens.api_responses} API response(s)\n",
            f"- telemetry: {code(t.session_id + '.telemetry.json')}\n\n",
        ))

    def _completeness(self) -> str:
        c = self.t.completeness
        n = len(self.order)
        lines = [
            "## Completeness\n\nWhat this reconstruction knows it does not know.\n\n",
            f"- main-thread record: {'present' if c.main_thread_present else 'ABSENT'}\n",
            f"- sub-agents with no recoverable spawn point: {c.agents_without_spawn_point} of {n}\n",
            f"- sub-agents with no recoverable join point: {c.agents_without_join_point} of {n}\n",
            f"- sub-agents whose lineage was never attributed: {c.agents_unattributed}\n",
            f"- sub-agents whose named parent is not in this set: "
            f"{c.agents_whose_parent_is_not_in_this_set}\n",
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

    def _timeline(self) -> str:
        if not self.order:
            return ("## Agent timeline\n\nThis session spawned no sub-agents that were "
                    "stored.\n\n")
        rows = ["## Agent timeline\n\n",
                "| agent | type | depth | parent | spawned | started | ended | joined | turns "
                "| tokens |\n",
                "|---|---|---|---|---|---|---|---|---:|---:|\n"]
        if self.main is not None:
            a = self.agents[""]
            rows.append(f"| main thread | — | 0 | — | — | {_time(a.started_at)} | "
                        f"{_time(a.ended_at)} | — | {a.turns.total} | {a.tokens.total} |\n")
        placed = [t for t in self.order if self.placements[t.agent_id].placed]
        for thread in placed + [t for t in self.order if t not in placed]:
            a = self.agents[thread.agent_id]
            p = self.placements[thread.agent_id]
            parent = (code_cell(a.parent_agent_id) if a.parent_agent_id else
                      _spawned_by(a, p))
            rows.append(
                f"| {code_cell(a.agent_id)} | {cell(a.agent_type) if a.agent_type else '—'} "
                f"| {a.spawn_depth or '—'} | {parent} "
                f"| {_point(p.host, p.spawn_turn, cells=True)} | {_time(a.started_at)} "
                f"| {_time(a.ended_at)} | {_point(p.host, p.join_turn, cells=True)} "
                f"| {a.turns.total} | {a.tokens.total} |\n")
        rows.append("\nIn this table `—` means \"could not be recovered\", never \"there was "
                    "none\".\n\n")
        return "".join(rows)

    def render(self) -> str:
        body = self._body()
        return "".join((self._header(), HOW_TO_READ, self._completeness(),
                        self._timeline(), *body))
