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
  turn the thread opens: that is the first request the notification could reach. Every
  delivery keeps the time of the line that carried it, and so does every tool result
  block: a turn merging several result lines is stamped with its first, but a join
  point is the line that carried the agent's result.
- A compaction boundary keeps its own time (compaction agents are linked by it);
  ``agent_progress`` copies keep what they name (:class:`Progress`).

Never raises on any input an adapter hands it.
"""

from __future__ import annotations

import sys

from .values import Usage, when_ns

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
    tool call's input as JSON bytes. On a tool result, ``agent`` and ``agent_type`` are
    what the line's structured result (``toolUseResult.agentId``/``agentType``) names,
    and ``when`` is the line's own time key: the moment that result reached the thread."""

    __slots__ = ("kind", "text", "name", "ref", "raw", "is_error", "async_ack", "agent",
                 "agent_type", "when", "line", "mentions", "named", "cut")

    def __init__(self, kind: str, text: str = "", *, name: str = "", ref: str = "",
                 raw: bytes = b"", is_error: bool = False, async_ack: bool = False) -> None:
        self.kind = kind
        self.text = text
        self.name = name
        self.ref = ref
        self.raw = raw
        self.is_error = is_error
        self.async_ack = async_ack
        self.agent = ""
        self.agent_type = ""
        self.when = ""
        #: Set on a tool block when the body is read lean (:mod:`.lean`): the 0-based
        #: body line it came from; ``line`` stays -1 while ``text`` and ``raw`` are held.
        self.line = -1
        #: Lean only, on a tool result: the watched agent ids its text names and the id
        #: an ``agentId: `` line in it names (what placement would have read there).
        self.mentions: tuple[str, ...] = ()
        self.named = ""
        #: Set when the text was read back cut (:mod:`.block_spill`): the bytes of it
        #: left unread, which the per-block cap elides.
        self.cut = 0


class Turn:
    """One turn of one thread. ``index`` is 1-based per thread; ``key`` identifies the
    turn across threads (a response id, or ``line:<uuid>``) so a copy counts once."""

    __slots__ = ("index", "role", "model", "when", "key", "blocks", "notified",
                 "sidechain", "compact_summary", "compacted_before", "compacted_when",
                 "results_only")

    def __init__(self, index: int, role: str, key: str) -> None:
        self.index = index
        self.role = role
        self.key = key
        self.model = ""
        self.when = ""  # sortable timestamp key of the turn's first line, "" if none
        self.blocks: list[Block] = []
        #: (agent id, time key of the line) for each result a notification delivered
        #: (an empty tuple until one does: most turns have none, and a long body has
        #: hundreds of thousands of turns)
        self.notified: list[tuple[str, str]] | tuple = ()
        self.sidechain = False
        self.compact_summary = False
        self.compacted_before = False
        self.compacted_when = ""  # the compaction boundary's own time key
        self.results_only = False


class Response:
    """Usage gathered for one API response id across all of its lines."""

    __slots__ = ("input", "output", "cache_creation", "cache_read", "has_usage", "stopped")

    def __init__(self) -> None:
        self.input = self.output = self.cache_creation = self.cache_read = 0
        self.has_usage = False
        self.stopped = False


class Progress:
    """One ``agent_progress`` line: a copy of a sub-agent's line in its host's file.
    ``agent`` the agent it names, ``call`` the spawning tool call it names
    (``parentToolUseID``), ``response``, ``usage`` and ``model`` the copied response's id,
    usage and model (``""``/None when it copies no usage)."""

    __slots__ = ("agent", "call", "when", "response", "usage", "model")

    def __init__(self, agent: str, call: str, when: str, response: str,
                 usage: Usage | None, model: str = "") -> None:
        self.agent = agent
        self.call = call
        self.when = when
        self.response = response
        self.usage = usage
        self.model = model


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
        self.progress: list[Progress] = []
        self.first_when = ""
        self.last_when = ""
        #: Lean only (:mod:`.lean_model`): the :class:`~.block_spill.BlockSpill` the
        #: turns' blocks are read back from.
        self.source = None

    @property
    def started_ns(self) -> int:
        return when_ns(self.first_when)

    @property
    def ended_ns(self) -> int:
        return when_ns(self.last_when)


def marked_turns(t: Transcript):
    """The turns of ``t`` that can hold a tool call or result, a delivered notification
    or a compaction mark, in order: every turn of a full transcript, only those of a lean
    one (:meth:`~.lean_tables.TurnTable.marked`), which is all placement, spawns and
    compaction read."""
    marked = getattr(t.turns, "marked", None)
    return marked() if marked is not None else t.turns


class ThreadBuilder:
    """Accumulates one record body's lines into a :class:`Transcript`."""

    def __init__(self, harness: str) -> None:
        self.out = Transcript(harness)
        self.line_no = 0  # set by :func:`~.lines.decoded_lines` before each line
        self._open: dict[str, Turn] = {}  # response id -> its turn
        self._pending_notified: list[tuple[str, str]] = []
        self._pending_compaction: str | bool = False
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

    def copied(self, progress: Progress | None = None) -> None:
        """A line that copies another thread's response (never counted here);
        ``progress`` what an ``agent_progress`` copy names, kept for placement and for
        the usage of agents whose own transcript is not stored."""
        self.out.copied_lines += 1
        if progress is not None:
            self.out.progress.append(progress)

    def compaction(self, when: str = "") -> None:
        """A compaction boundary at time key ``when``: marked before the next turn."""
        self._pending_compaction = when or True

    def notify(self, agent_ids: list[str], when: str = "") -> None:
        """A non-conversation line (at time key ``when``) delivering these agents'
        results."""
        self._pending_notified.extend((agent, when) for agent in agent_ids)

    # -- conversation -----------------------------------------------------------------
    def message(self, role: str, blocks: list[Block], *, response_id: str = "",
                line_id: str = "", model: str = "", usage: Usage | None = None,
                stop_reason: bool = False, when: str = "", sidechain: bool = False,
                compact_summary: bool = False, notified: list[str] | None = None) -> None:
        """One user or assistant line. ``stop_reason`` says whether the line carried one."""
        out = self.out
        if model:
            model = sys.intern(model)  # one string per model, not one per turn
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
            turn.notified = [*turn.notified, *((agent, when) for agent in notified)]
        if role == USER:
            for block in blocks:
                if block.kind == TOOL_RESULT:
                    block.when = when

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
            if isinstance(self._pending_compaction, str):
                turn.compacted_when = self._pending_compaction
            self._pending_compaction = False
        if self._pending_notified:
            turn.notified = [*turn.notified, *self._pending_notified]
            self._pending_notified = []
        out.turns.append(turn)
        if role == ASSISTANT and response_id:
            self._open[response_id] = turn
        return turn

    def finish(self) -> Transcript:
        """The transcript. Notifications after the last turn attach to the last turn."""
        if self._pending_notified and self.out.turns:
            last = self.out.turns[-1]
            last.notified = [*last.notified, *self._pending_notified]
            self._pending_notified = []
        return self.out
