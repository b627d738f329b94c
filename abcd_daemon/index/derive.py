"""One record → its index rows. Pure: bytes in, rows out; never raises on a body.

A row per turn holds the turn's redacted text (user prompt, assistant text and
thinking, tool calls with their input, tool results) with its thread, role, tool
names and time. A row per API response holds its four token figures, read from the
same :class:`~abcd_daemon.reconstruct.model.Transcript` that telemetry counts (one
parser, one definition of a response: the id Claude Code repeats on each line of
it). Role is ``user``, ``assistant`` or ``tool`` (a turn of tool results only).
A row per response an ``agent_progress`` line copies holds, per agent it names, the
usage reconstruct reports apart for an agent whose transcript is not stored
(:func:`~abcd_daemon.reconstruct.spawns.progress_responses`: the same rule), with the
type its spawning call names; whether the agent is stored is decided when read
(:mod:`.usage`), since its record may land later.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Iterator

import msgspec

from ..reconstruct.harness import parse_body
from ..reconstruct.lean import Lean
from ..reconstruct.model import (ASSISTANT, TEXT, THINKING, TOOL_RESULT, TOOL_USE, Progress, Transcript,
                                 marked_turns, when_ns)
from ..reconstruct.placement import spawn_type
from ..reconstruct.refill import with_text
from ..reconstruct.placement import SPAWN_TOOLS
from ..reconstruct.spawns import progress_responses
from ..store.record import Record

#: A turn's indexed text is cut here (the artefact shows the rest).
MAX_TURN_TEXT = 256 << 10


def input_text(raw: bytes) -> str:
    """The words of a tool call's JSON input: its string values, one per line (a
    command, a path, a file's content), unescaped — searching the raw JSON would
    glue ``\\n`` to the next word. Raw text when it is not JSON."""
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return raw.decode("utf-8", "replace")
    if isinstance(value, dict):  # the common shape: a flat object of strings
        flat = list(value.values())
        if all(type(v) is str for v in flat):
            return "\n".join(flat)
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))
        elif v is not None and not isinstance(v, bool):
            out.append(str(v))
    return "\n".join(out)


_NS_RANGE = 1 << 63


@functools.lru_cache(maxsize=4096)
def _day_ns(day: str) -> int:
    return when_ns(day + "T00:00:00.000000000")


def key_ns(key: str) -> int:
    """:func:`~abcd_daemon.reconstruct.model.when_ns` of a turn's time key
    (``YYYY-MM-DDTHH:MM:SS.nnnnnnnnn``, already checked), by its day: a parse per
    day instead of one per turn. A time outside what a 64-bit integer holds in
    nanoseconds (before 1678, after 2262) is 0, "no time"."""
    if not key or key[17:19] == "60":  # a leap second: as when_ns reads it
        ns = when_ns(key)
    else:
        ns = (_day_ns(key[:10]) + (int(key[11:13]) * 3600 + int(key[14:16]) * 60 + int(key[17:19])) * 1_000_000_000
              + int(key[20:29]))
    return ns if -_NS_RANGE < ns < _NS_RANGE else 0  # SQLite holds 64-bit integers: past 2262 is "no time"


class TurnRow(msgspec.Struct, frozen=True):
    """One turn's row (a msgspec Struct: made once per turn, ten times faster than a
    frozen dataclass)."""

    turn: int
    role: str
    tools: str  # space-separated tool names called or answered in the turn
    when_ns: int
    text: str


class ResponseRow(msgspec.Struct, frozen=True):
    response_id: str
    model: str
    when_ns: int
    input: int
    output: int
    cache_creation: int
    cache_read: int


@dataclasses.dataclass(frozen=True)
class CopyRow:
    """One response of agent ``agent_id`` known from ``agent_progress`` copies (its id
    ``line:<record>:<n>`` for a copied usage line with none)."""

    agent_id: str
    agent_type: str  # the spawning call's subagent_type ("" when unknown)
    response: ResponseRow


@dataclasses.dataclass(frozen=True)
class Derived:
    """Everything the index holds for one record. ``turns`` may be an iterator (a body
    read lean, :func:`derive_lean`): then ``responses`` is complete only once ``turns``
    has been consumed, which is the order :mod:`.db` writes them in."""

    record: Record
    turns: Iterable[TurnRow]
    responses: list[ResponseRow]
    copies: list[CopyRow] = dataclasses.field(default_factory=list)


def copy_rows(record: Record, t: Transcript) -> list[CopyRow]:
    """The responses ``t``'s ``agent_progress`` lines copy, per agent they name."""
    if not t.progress:
        return []
    by_agent: dict[str, list[Progress]] = {}
    for copy in t.progress:
        by_agent.setdefault(copy.agent, []).append(copy)
    calls = {b.ref: b.raw for turn in marked_turns(t) for b in turn.blocks
             if b.kind == TOOL_USE and b.name in SPAWN_TOOLS and b.ref}
    rows = []
    for agent, copies in by_agent.items():
        call = next((c.call for c in copies if c.call), "")
        kind = spawn_type(calls[call]) if call in calls else ""
        for key, (first, (i, o, cc, cr)) in progress_responses(copies).items():
            rid = key if first.response else f"line:{record.name}:{key[5:]}"  # unique in the session
            rows.append(CopyRow(agent, kind, ResponseRow(rid, first.model, key_ns(first.when), i, o, cc, cr)))
    return rows


def _turn_rows(t, turns, model_of: dict[str, tuple[str, int]]) -> Iterator[TurnRow]:
    names_by_ref: dict[str, str] = {}
    for turn in turns:
        parts: list[str] = []  # the non-empty texts of the turn's blocks
        tools: list[str] = []  # the tool names, repeats included
        for b in turn.blocks:
            kind = b.kind
            if kind == TEXT or kind == THINKING:
                if b.text:
                    parts.append(b.text)
            elif kind == TOOL_USE:
                if b.name:
                    tools.append(b.name)
                if b.ref:
                    names_by_ref[b.ref] = b.name
                parts.append(b.name + "\n" + input_text(b.raw))
            elif kind == TOOL_RESULT:
                name = names_by_ref.get(b.ref, "")
                if name:
                    tools.append(name)
                if b.text:
                    parts.append(b.text)
        at = key_ns(turn.when)
        if model_of is not None and turn.role == ASSISTANT and turn.key and (
                not turn.key.startswith("line:")):
            model_of[turn.key] = (turn.model, at)
        if parts:
            role = "tool" if turn.results_only else turn.role
            yield TurnRow(turn.index, role, " ".join(dict.fromkeys(tools)) if tools else "", at,
                          "\n".join(parts)[:MAX_TURN_TEXT])


class _LeanModels:
    """What :func:`_turn_rows` puts in ``model_of`` (response id → the model and time of
    the turn it opened), read from a lean transcript's columns instead of kept for
    every response."""

    def __init__(self, t) -> None:
        self.t = t

    def get(self, rid: str, default):
        table, responses = self.t.turns, self.t.responses
        slot = responses.slot.get(rid)
        i = responses.turn[slot] if slot is not None else -1
        if i < 0 or rid.startswith("line:") or table.roles[table.role[i]] != ASSISTANT:
            return default
        return table.models[table.model[i]], key_ns(table.when_of(i))


def _response_rows(record: Record, t, model_of, out: list[ResponseRow]) -> list[ResponseRow]:
    for rid, r in t.responses.items():
        if not r.has_usage:
            continue
        model, at = model_of.get(rid, ("", 0))
        out.append(ResponseRow(rid, model, at, r.input, r.output, r.cache_creation, r.cache_read))
    for n, (i, o, cc, cr) in enumerate(t.anonymous_usage):
        out.append(ResponseRow(f"anonymous:{record.name}:{n}", "", 0, i, o, cc, cr))
    return out


def derive(record: Record, body: bytes) -> Derived:
    """The rows of ``record`` (its ``body`` is the redacted transcript)."""
    t = parse_body(body)
    model_of: dict[str, tuple[str, int]] = {}
    turns = list(_turn_rows(t, t.turns, model_of))
    return Derived(record, turns, _response_rows(record, t, model_of, []), copy_rows(record, t))


def _spawn_call(block) -> bool:
    return block.kind == TOOL_USE and block.name in SPAWN_TOOLS


def derive_lean(record: Record, body) -> Derived:
    """:func:`derive` for a body of any size (a source with ``lines()``:
    :class:`~abcd_daemon.store.body.RecordBody`): read lean (the turn model in columns,
    each line's blocks spilled to a temp file as it is decoded), then given back turn by
    turn as the rows are consumed (:mod:`~abcd_daemon.reconstruct.refill`), so no
    turn's text outlives its row. The same rows as :func:`derive`."""
    t = parse_body(body, Lean((), keep_tool=_spawn_call))  # copy_rows reads only those
    responses: list[ResponseRow] = []

    def turns() -> Iterator[TurnRow]:
        # A text the row cuts at MAX_TURN_TEXT characters is read no further than
        # that many characters can take (4 bytes each): the same rows.
        yield from _turn_rows(t, with_text(t, t.turns, 4 * MAX_TURN_TEXT + 4), None)
        _response_rows(record, t, _LeanModels(t), responses)

    return Derived(record, turns(), responses, copy_rows(record, t))
