"""The one turn model every harness adapter produces, and the builder that enforces it.

An adapter reads a record body line by line and tells a :class:`ThreadBuilder` what each
line was; the builder alone decides what a turn is and how usage is gathered, so both
harnesses obey the same rules (reference §6.2, issue iss-2609090723027424):

- A turn is one user line or one API response. Every assistant line carrying a response
  id already seen in this thread joins that response's turn, even when tool-result lines
  were written between its blocks (the harness executes tools while a response streams).
- Consecutive user lines made only of tool results, with no new response between them,
  are one turn: they are the one reply the next request carries.
- Usage is gathered per response: input and cache tokens from any line (the largest
  seen), output tokens the MAXIMUM across the response's lines (before harness 2.1.97
  early lines carry a streaming placeholder). Usage with no response id is kept per line
  (it cannot be de-duplicated). Whether the response's last line had a stop reason is
  recorded, so a response that never finished can be flagged.
- A non-conversation line naming an agent (a task notification) attaches to the next
  turn the thread opens: that is the first request the notification could reach.

Never raises on any input an adapter hands it.
"""

from __future__ import annotations

import re

from ..store.record import format_rfc3339_ns, parse_rfc3339_ns

# Block kinds. Anything else keeps the harness's own type name.
TEXT = "text"
THINKING = "thinking"
TOOL_USE = "tool_use"
TOOL_RESULT = "tool_result"
IMAGE = "image"

USER = "user"
ASSISTANT = "assistant"


class Block:
    """One content block. ``text`` is the text, thinking, result text or other payload;
    ``ref`` the tool-use id (for a call) or the id answered (for a result); ``raw`` a
    tool call's input as JSON bytes."""

    __slots__ = ("kind", "text", "name", "ref", "raw", "is_error", "async_ack")

    def __init__(self, kind: str, text: str = "", *, name: str = "", ref: str = "",
                 raw: bytes = b"", is_error: bool = False, async_ack: bool = False) -> None:
        self.kind = kind
        self.text = text
        self.name = name
        self.ref = ref
        self.raw = raw
        self.is_error = is_error
        self.async_ack = async_ack


class Turn:
    """One turn of one thread. ``index`` is 1-based per thread; ``key`` identifies the
    turn across threads (a response id, or ``line:<uuid>``) so a copy counts once."""

    __slots__ = ("index", "role", "model", "when", "key", "blocks", "notified",
                 "sidechain", "compact_summary", "compacted_before", "results_only")

    def __init__(self, index: int, role: str, key: str) -> None:
        self.index = index
        self.role = role
        self.key = key
        self.model = ""
        self.when = ""  # sortable timestamp key of the turn's first line, "" if none
        self.blocks: list[Block] = []
        self.notified: list[str] = []  # agent ids whose result a notification delivered
        self.sidechain = False
        self.compact_summary = False
        self.compacted_before = False
        self.results_only = False


class Response:
    """Usage gathered for one API response id across all of its lines."""

    __slots__ = ("input", "output", "cache_creation", "cache_read", "has_usage", "stopped")

    def __init__(self) -> None:
        self.input = self.output = self.cache_creation = self.cache_read = 0
        self.has_usage = False
        self.stopped = False


Usage = tuple[int, int, int, int]  # input, output, cache_creation, cache_read


class Transcript:
    """Everything one record body yields. Counters are per line of the body."""

    def __init__(self, harness: str) -> None:
        self.harness = harness
        self.turns: list[Turn] = []
        self.responses: dict[str, Response] = {}
        self.anonymous_usage: list[Usage] = []  # usage lines with no response id
        self.tool_calls: list[tuple[str, str]] = []  # (block id or "", tool name)
        self.models: list[str] = []  # first-seen order
        self.usage_lines = 0
        self.lines = 0
        self.unparseable = 0
        self.unrecognised = 0
        self.not_utf8 = 0
        self.copied_lines = 0
        self.first_when = ""
        self.last_when = ""

    @property
    def started_ns(self) -> int:
        return when_ns(self.first_when)

    @property
    def ended_ns(self) -> int:
        return when_ns(self.last_when)


_ZULU = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z")


def _zulu_key(stamp: str) -> str:
    return stamp[:19] + (stamp[19:-1] or ".").ljust(10, "0")


def when_key(stamp: object) -> str:
    """A sortable key ``YYYY-MM-DDTHH:MM:SS.nnnnnnnnn`` (UTC) for an RFC 3339 time, or
    ``""`` when ``stamp`` is not one. Keys compare as the times they name."""
    if not isinstance(stamp, str):
        return ""
    if _ZULU.fullmatch(stamp):
        if ("01" <= stamp[5:7] <= "12" and "01" <= stamp[8:10] <= "31"
                and stamp[11:13] <= "23" and stamp[14:16] <= "59" and stamp[17:19] <= "60"):
            return _zulu_key(stamp)
        return ""
    try:
        return _zulu_key(format_rfc3339_ns(parse_rfc3339_ns(stamp)))
    except (ValueError, OverflowError, OSError):
        return ""


def when_ns(key: str) -> int:
    """Nanoseconds since the epoch for a :func:`when_key` (0 for ``""``)."""
    if not key:
        return 0
    try:
        return parse_rfc3339_ns(key + "Z")
    except (ValueError, OverflowError):
        return 0


def when_label(key: str) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` for a :func:`when_key` (``""`` for ``""``)."""
    return key[:19] + "Z" if key else ""


#: A count above this is not a token count a response could carry (a forged or broken
#: field): it reads as 0, so no sum can overflow the telemetry's integers.
_MAX_TOKENS = 10**12


def _as_int(value: object) -> int:
    """A token count from a source field: an int in 0..10^12, anything else 0."""
    if type(value) is int:
        return value if 0 < value <= _MAX_TOKENS else 0
    if isinstance(value, float) and 0 < value <= _MAX_TOKENS:  # NaN fails both tests
        return int(value)
    return 0


def usage_of(input_tokens: object, output_tokens: object, cache_creation: object,
             cache_read: object) -> Usage:
    """Normalise four source fields into a :data:`Usage` tuple."""
    return (_as_int(input_tokens), _as_int(output_tokens), _as_int(cache_creation),
            _as_int(cache_read))


class ThreadBuilder:
    """Accumulates one record body's lines into a :class:`Transcript`."""

    def __init__(self, harness: str) -> None:
        self.out = Transcript(harness)
        self._open: dict[str, Turn] = {}  # response id -> its turn
        self._pending_notified: list[str] = []
        self._pending_compaction = False
        self._models: set[str] = set()

    # -- line bookkeeping -------------------------------------------------------------
    def line(self, when: str) -> None:
        """Count one non-blank line; ``when`` is its :func:`when_key` (may be "")."""
        out = self.out
        out.lines += 1
        if when:
            if not out.first_when or when < out.first_when:
                out.first_when = when
            if when > out.last_when:
                out.last_when = when

    def unparseable(self) -> None:
        self.out.lines += 1
        self.out.unparseable += 1

    def unrecognised(self) -> None:
        self.out.unrecognised += 1

    def not_utf8(self) -> None:
        self.out.not_utf8 += 1

    def copied(self) -> None:
        """A line that copies another thread's response (never counted here)."""
        self.out.copied_lines += 1

    def compaction(self) -> None:
        """A compaction boundary: marked before the next turn."""
        self._pending_compaction = True

    def notify(self, agent_ids: list[str]) -> None:
        """A non-conversation line delivering these agents' results."""
        self._pending_notified.extend(agent_ids)

    # -- conversation -----------------------------------------------------------------
    def message(self, role: str, blocks: list[Block], *, response_id: str = "",
                line_id: str = "", model: str = "", usage: Usage | None = None,
                stop_reason: bool = False, when: str = "", sidechain: bool = False,
                compact_summary: bool = False, notified: list[str] | None = None) -> None:
        """One user or assistant line. ``stop_reason`` says whether the line carried one."""
        out = self.out
        if model and model not in self._models:
            self._models.add(model)
            out.models.append(model)
        if role == ASSISTANT and response_id:
            response = out.responses.get(response_id)
            if response is None:
                response = out.responses[response_id] = Response()
            response.stopped = stop_reason
            if usage is not None:
                out.usage_lines += 1
                response.has_usage = True
                i, o, cc, cr = usage
                if i > response.input:
                    response.input = i
                if o > response.output:
                    response.output = o
                if cc > response.cache_creation:
                    response.cache_creation = cc
                if cr > response.cache_read:
                    response.cache_read = cr
        elif usage is not None:
            out.usage_lines += 1
            out.anonymous_usage.append(usage)
        for block in blocks:
            if block.kind == TOOL_USE:
                out.tool_calls.append((block.ref, block.name))
        turn = self._turn_for(role, blocks, response_id, line_id)
        turn.blocks.extend(blocks)
        if model and not turn.model:
            turn.model = model
        if when and not turn.when:
            turn.when = when
        if sidechain:
            turn.sidechain = True
        if compact_summary:
            turn.compact_summary = True
        if notified:
            turn.notified.extend(notified)

    def _turn_for(self, role: str, blocks: list[Block], response_id: str,
                  line_id: str) -> Turn:
        out = self.out
        if role == ASSISTANT and response_id:
            turn = self._open.get(response_id)
            if turn is not None:
                return turn
        results_only = role == USER and bool(blocks) and all(
            b.kind == TOOL_RESULT for b in blocks)
        if results_only and out.turns:
            last = out.turns[-1]
            if last.results_only and not self._pending_compaction:
                return last
        key = response_id if role == ASSISTANT and response_id else (
            f"line:{line_id}" if line_id else "")
        turn = Turn(len(out.turns) + 1, role, key)
        turn.results_only = results_only
        if self._pending_compaction:
            turn.compacted_before = True
            self._pending_compaction = False
        if self._pending_notified:
            turn.notified.extend(self._pending_notified)
            self._pending_notified = []
        out.turns.append(turn)
        if role == ASSISTANT and response_id:
            self._open[response_id] = turn
        return turn

    def finish(self) -> Transcript:
        """The transcript. Notifications after the last turn attach to the last turn."""
        if self._pending_notified and self.out.turns:
            self.out.turns[-1].notified.extend(self._pending_notified)
            self._pending_notified = []
        return self.out
