"""The turn model of a body read lean, held in columns: a few dozen bytes a turn
(issue 16).

:class:`LeanThreadBuilder` obeys every rule of :class:`~.model.ThreadBuilder` (it
overrides only where a turn and a response are kept), so the transcript it builds has
the same turns, responses, usage, tool calls, notifications and counters. What differs
is how they are held:

- ``Transcript.turns`` is a :class:`TurnTable`: per turn its role, key, model, time,
  flags and where its lines' blocks were spilled, in arrays (the rare parts — delivered
  notifications, compaction times, a turn of several lines — in dicts). Indexing or
  iterating it builds a :class:`~.model.Turn` on the fly whose ``blocks`` are only its
  tool calls and tool results, text dropped (:meth:`~.lean.Lean.strip`: what placement,
  spawns and telemetry read); nothing else reads a lean turn's blocks.
- ``Transcript.responses`` is a :class:`ResponseTable` (``items()``/``get`` give
  :class:`~.model.Response` values built on the fly).
- Every line's blocks, whole, go to ``Transcript.source``, a
  :class:`~.block_spill.BlockSpill`, as the line is read: the writer gets them back from
  there (:mod:`.refill`), so no line is decoded twice and no text stays in memory.

Never raises on any input an adapter hands it.
"""

from __future__ import annotations

import sys
from array import array

from .block_spill import BlockSpill
from .model import ASSISTANT, TOOL_RESULT, TOOL_USE, USER, Block, Response, ThreadBuilder, Turn

_WHEN = 29  # every non-empty time key is this long (YYYY-MM-DDTHH:MM:SS.nnnnnnnnn)
_NO_WHEN = b"\0" * _WHEN
_SIDECHAIN, _SUMMARY, _COMPACTED, _RESULTS_ONLY = 1, 2, 4, 8


class ResponseTable:
    """Response id → usage, in columns (see the module docstring)."""

    def __init__(self) -> None:
        self.slot: dict[str, int] = {}
        self.usage = array("q")  # 4 per response: input, output, cache creation, read
        self.flags = bytearray()  # 1 has usage, 2 stopped
        self.turn = array("q")  # the turn (0-based) the response opened, -1 until then

    def __len__(self) -> int:
        return len(self.slot)

    def __contains__(self, rid: object) -> bool:
        return rid in self.slot

    def add(self, rid: str, usage, stopped: bool) -> int:
        """One line of response ``rid``: the largest of each figure, the last line's
        stop reason. Returns its slot."""
        slot = self.slot.get(rid)
        if slot is None:
            slot = self.slot[rid] = len(self.flags)
            self.usage.extend((0, 0, 0, 0))
            self.flags.append(0)
            self.turn.append(-1)
        flags = (self.flags[slot] & 1) | (2 if stopped else 0)
        if usage is not None:
            flags |= 1
            u, base = self.usage, 4 * slot
            for k in range(4):
                if usage[k] > u[base + k]:
                    u[base + k] = usage[k]
        self.flags[slot] = flags
        return slot

    def _response(self, slot: int) -> Response:
        r = Response()
        r.input, r.output, r.cache_creation, r.cache_read = self.usage[4 * slot:4 * slot + 4]
        r.has_usage = bool(self.flags[slot] & 1)
        r.stopped = bool(self.flags[slot] & 2)
        return r

    def get(self, rid: str, default=None):
        slot = self.slot.get(rid)
        return default if slot is None else self._response(slot)

    def items(self):
        for rid, slot in self.slot.items():
            yield rid, self._response(slot)


class TurnTable:
    """A lean transcript's turns, in columns (see the module docstring)."""

    def __init__(self) -> None:
        self.roles: list[str] = []  # the distinct roles, indexed by ``role``
        self.role = bytearray()
        self.key: list[str] = []
        self.models: list[str] = [""]
        self._model_no: dict[str, int] = {"": 0}
        self.model = array("I")
        self.when = bytearray()
        self.flags = bytearray()
        self.spilled = array("q")  # the first line's blocks' offset in the spill
        self.more: dict[int, list[int]] = {}  # further lines' offsets
        self.tools: dict[int, list[Block]] = {}
        self.notified: dict[int, list[tuple[str, str]]] = {}
        self.compacted_when: dict[int, str] = {}
        self._odd_when: dict[int, str] = {}  # a key that is not 29 ASCII characters
        self._marked = None  # (turns when computed, the marked turns' indexes)

    def __len__(self) -> int:
        return len(self.role)

    def __bool__(self) -> bool:
        return len(self.role) > 0

    def new(self, role: str, key: str, flags: int) -> int:
        if role not in self.roles:
            self.roles.append(role)
        self.role.append(self.roles.index(role))
        self.key.append(key)
        self.model.append(0)
        self.when += _NO_WHEN
        self.flags.append(flags)
        self.spilled.append(-1)
        return len(self.role) - 1

    def set_model(self, i: int, model: str) -> None:
        n = self._model_no.get(model)
        if n is None:
            n = self._model_no[model] = len(self.models)
            self.models.append(model)
        self.model[i] = n

    def when_of(self, i: int) -> str:
        if i in self._odd_when:
            return self._odd_when[i]
        raw = self.when[_WHEN * i:_WHEN * (i + 1)]
        return "" if raw == _NO_WHEN else raw.decode("ascii")

    def set_when(self, i: int, when: str) -> None:
        if len(when) == _WHEN and when.isascii():
            self.when[_WHEN * i:_WHEN * (i + 1)] = when.encode("ascii")
        else:
            self._odd_when[i] = when

    def add_spilled(self, i: int, offset: int) -> None:
        if self.spilled[i] < 0:
            self.spilled[i] = offset
        else:
            self.more.setdefault(i, []).append(offset)

    def offsets(self, i: int) -> list[int]:
        """Where turn ``i``'s lines' blocks were spilled, in the order they were read."""
        first = self.spilled[i]
        return ([first] if first >= 0 else []) + self.more.get(i, [])

    def __getitem__(self, i: int) -> Turn:
        n = len(self.role)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        turn = Turn(i + 1, self.roles[self.role[i]], self.key[i])
        turn.model = self.models[self.model[i]]
        if self.when[_WHEN * i]:
            turn.when = self.when[_WHEN * i:_WHEN * (i + 1)].decode("ascii")
        elif self._odd_when:
            turn.when = self._odd_when.get(i, "")
        flags = self.flags[i]
        if flags:
            turn.sidechain = bool(flags & _SIDECHAIN)
            turn.compact_summary = bool(flags & _SUMMARY)
            turn.compacted_before = bool(flags & _COMPACTED)
            turn.results_only = bool(flags & _RESULTS_ONLY)
            if flags & _COMPACTED:
                turn.compacted_when = self.compacted_when.get(i, "")
        if self.notified:
            turn.notified = self.notified.get(i, ())
        turn.blocks = self.tools.get(i, [])
        return turn

    def __iter__(self):
        for i in range(len(self.role)):
            yield self[i]

    def marked(self):
        """The turns (built, in order) that hold a tool call or result, a delivered
        notification or a compaction mark: all that placement, spawns and compaction
        read of a thread."""
        if self._marked is None or self._marked[0] != len(self.role):
            self._marked = (len(self.role), sorted(
                {*self.tools, *self.notified,
                 *(i for i, f in enumerate(self.flags) if f & _COMPACTED)}))
        for i in self._marked[1]:
            yield self[i]

    def keys_and_roles(self):
        """(key, role) of every turn, without building the turns (what telemetry counts)."""
        roles = self.roles
        return zip(self.key, (roles[r] for r in self.role))


class LeanThreadBuilder(ThreadBuilder):
    """:class:`~.model.ThreadBuilder` holding the transcript in columns and spilling
    every line's blocks (see the module docstring)."""

    def __init__(self, harness: str, lean) -> None:
        super().__init__(harness)
        self.lean = lean
        out = self.out
        out.turns = TurnTable()
        out.responses = ResponseTable()
        out.source = BlockSpill(lean.spill_dir)

    def message(self, role: str, blocks: list[Block], *, response_id: str = "",
                line_id: str = "", model: str = "", usage=None,
                stop_reason: bool = False, when: str = "", sidechain: bool = False,
                compact_summary: bool = False, notified: list[str] | None = None) -> None:
        out = self.out
        if model:
            model = sys.intern(model)
        if model and model not in self._models:
            self._models.add(model)
            out.models.append(model)
        slot = -1
        if role == ASSISTANT and response_id:
            slot = out.responses.add(response_id, usage, stop_reason)
            if usage is not None:
                out.usage_lines += 1
        elif usage is not None:
            out.usage_lines += 1
            out.anonymous_usage.append(usage)
        tools = []
        for block in blocks:
            if block.kind == TOOL_USE:
                out.tool_calls.append((block.ref, block.name))
                tools.append(block)
            elif block.kind == TOOL_RESULT:
                tools.append(block)
        table = out.turns
        i = self._lean_turn(role, blocks, response_id, line_id, slot)
        table.add_spilled(i, out.source.put(blocks))
        if model and not table.model[i]:
            table.set_model(i, model)
        if when and not table.when[_WHEN * i] and i not in table._odd_when:
            table.set_when(i, when)
        if sidechain:
            table.flags[i] |= _SIDECHAIN
        if compact_summary:
            table.flags[i] |= _SUMMARY
        if notified:
            table.notified[i] = [*table.notified.get(i, ()), *((a, when) for a in notified)]
        if tools and self.lean.keep_tool is not None:
            tools = [block for block in tools if self.lean.keep_tool(block)]
        if tools:
            if role == USER:
                for block in tools:
                    if block.kind == TOOL_RESULT:
                        block.when = when
            self.lean.strip(tools, self.line_no)
            table.tools.setdefault(i, []).extend(tools)

    def _lean_turn(self, role: str, blocks: list[Block], response_id: str, line_id: str,
                   slot: int) -> int:
        """The 0-based turn this line joins (the rules of ``ThreadBuilder._turn_for``)."""
        out = self.out
        table = out.turns
        if slot >= 0:
            opened = out.responses.turn[slot]
            if opened >= 0:
                return opened
        results_only = role == USER and bool(blocks) and all(
            b.kind == TOOL_RESULT for b in blocks)
        if results_only and table and table.flags[-1] & _RESULTS_ONLY and (
                not self._pending_compaction):
            return len(table) - 1
        key = response_id if role == ASSISTANT and response_id else (
            f"line:{line_id}" if line_id else "")
        flags = _RESULTS_ONLY if results_only else 0
        pending = self._pending_compaction
        if pending:
            flags |= _COMPACTED
            self._pending_compaction = False
        i = table.new(role, key, flags)
        if isinstance(pending, str):
            table.compacted_when[i] = pending
        if self._pending_notified:
            table.notified[i] = list(self._pending_notified)
            self._pending_notified = []
        if slot >= 0:
            out.responses.turn[slot] = i
        return i

    def finish(self):
        table = self.out.turns
        if self._pending_notified and table:
            i = len(table) - 1
            table.notified[i] = [*table.notified.get(i, ()), *self._pending_notified]
            self._pending_notified = []
        return self.out
