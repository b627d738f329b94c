"""One record → its index rows. Pure: bytes in, rows out; never raises on a body.

A row per turn holds the turn's redacted text (user prompt, assistant text and
thinking, tool calls with their input, tool results) with its thread, role, tool
names and time. A row per API response holds its four token figures, read from the
same :class:`~abcd_daemon.reconstruct.model.Transcript` that telemetry counts (one
parser, one definition of a response: the id Claude Code repeats on each line of
it). Role is ``user``, ``assistant`` or ``tool`` (a turn of tool results only).
"""

from __future__ import annotations

import dataclasses
import functools

from ..reconstruct.harness import parse_body
from ..reconstruct.model import ASSISTANT, TEXT, THINKING, TOOL_RESULT, TOOL_USE, when_ns
from ..store.record import Record

#: A turn's indexed text is cut here (the artefact shows the rest).
MAX_TURN_TEXT = 256 << 10


@functools.lru_cache(maxsize=4096)
def _day_ns(day: str) -> int:
    return when_ns(day + "T00:00:00.000000000")


def key_ns(key: str) -> int:
    """:func:`~abcd_daemon.reconstruct.model.when_ns` of a turn's time key
    (``YYYY-MM-DDTHH:MM:SS.nnnnnnnnn``, already checked), by its day: a parse per
    day instead of one per turn."""
    if not key or key[17:19] == "60":  # a leap second: as when_ns reads it
        return when_ns(key)
    return (_day_ns(key[:10]) + (int(key[11:13]) * 3600 + int(key[14:16]) * 60 + int(key[17:19])) * 1_000_000_000
            + int(key[20:29]))


@dataclasses.dataclass(frozen=True)
class TurnRow:
    turn: int
    role: str
    tools: str  # space-separated tool names called or answered in the turn
    when_ns: int
    text: str


@dataclasses.dataclass(frozen=True)
class ResponseRow:
    response_id: str
    model: str
    when_ns: int
    input: int
    output: int
    cache_creation: int
    cache_read: int


@dataclasses.dataclass(frozen=True)
class Derived:
    """Everything the index holds for one record."""

    record: Record
    turns: list[TurnRow]
    responses: list[ResponseRow]


def derive(record: Record, body: bytes) -> Derived:
    """The rows of ``record`` (its ``body`` is the redacted transcript)."""
    t = parse_body(body)
    turns: list[TurnRow] = []
    model_of: dict[str, tuple[str, int]] = {}
    names_by_ref: dict[str, str] = {}
    for turn in t.turns:
        parts: list[str] = []
        tools: list[str] = []
        for b in turn.blocks:
            if b.kind in (TEXT, THINKING):
                parts.append(b.text)
            elif b.kind == TOOL_USE:
                tools.append(b.name)
                if b.ref:
                    names_by_ref[b.ref] = b.name
                parts.append(b.name + " " + b.raw.decode("utf-8", "replace"))
            elif b.kind == TOOL_RESULT:
                name = names_by_ref.get(b.ref, "")
                if name:
                    tools.append(name)
                parts.append(b.text)
        text = "\n".join(p for p in parts if p)[:MAX_TURN_TEXT]
        role = "tool" if turn.results_only else turn.role
        at = key_ns(turn.when)
        if turn.role == ASSISTANT and turn.key and not turn.key.startswith("line:"):
            model_of[turn.key] = (turn.model, at)
        if text:
            turns.append(TurnRow(turn.index, role, " ".join(dict.fromkeys(t_ for t_ in tools if t_)), at, text))
    responses = []
    for rid, r in t.responses.items():
        if not r.has_usage:
            continue
        model, at = model_of.get(rid, ("", 0))
        responses.append(ResponseRow(rid, model, at, r.input, r.output, r.cache_creation, r.cache_read))
    for n, (i, o, cc, cr) in enumerate(t.anonymous_usage):
        responses.append(ResponseRow(f"anonymous:{record.name}:{n}", "", 0, i, o, cc, cr))
    return Derived(record, turns, responses)
