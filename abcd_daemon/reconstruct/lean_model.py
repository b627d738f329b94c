"""The turn model of a body read lean, held in columns: a few dozen bytes a turn
(issue 16).

:class:`LeanThreadBuilder` obeys every rule of :class:`~.model.ThreadBuilder` (it
overrides only where a turn and a response are kept), so the transcript it builds has
the same turns, responses, usage, tool calls, notifications and counters. What differs
is how they are held:

- ``Transcript.turns`` is a :class:`~.lean_tables.TurnTable`: per turn its role, key, model, time,
  flags and where its lines' blocks were spilled, in arrays (the rare parts — delivered
  notifications, compaction times, a turn of several lines — in dicts). Indexing or
  iterating it builds a :class:`~.model.Turn` on the fly whose ``blocks`` are only its
  tool calls and tool results, text dropped (:meth:`~.lean.Lean.strip`: what placement,
  spawns and telemetry read); nothing else reads a lean turn's blocks.
- ``Transcript.responses`` is a :class:`~.lean_tables.ResponseTable` (``items()``/``get`` give
  :class:`~.model.Response` values built on the fly).
- Every line's blocks go to ``Transcript.source`` as the line is read
  (:meth:`~.lean.Lean.spill`): rendered, a :class:`~.render_spill.RenderSpill` the
  artefact's writer copies them from, or whole, a :class:`~.block_spill.BlockSpill` the
  index gets them back from (:mod:`.refill`) — so no line is decoded twice and no text
  stays in memory.

Never raises on any input an adapter hands it.
"""

from __future__ import annotations

import sys

from .lean_tables import (COMPACTED, RESULTS_ONLY, SIDECHAIN, SUMMARY, ResponseTable,
                          TurnTable)
from .model import ASSISTANT, TOOL_RESULT, TOOL_USE, USER, Block, ThreadBuilder


class LeanThreadBuilder(ThreadBuilder):
    """:class:`~.model.ThreadBuilder` holding the transcript in columns and spilling
    every line's blocks (see the module docstring)."""

    def __init__(self, harness: str, lean) -> None:
        super().__init__(harness)
        self.lean = lean
        out = self.out
        out.turns = TurnTable()
        out.responses = ResponseTable()
        out.source = lean.spill()

    def message(self, role: str, blocks: list[Block], *, response_id: str = "",
                line_id: str = "", model: str = "", usage=None,
                stop_reason: bool = False, when: str = "", sidechain: bool = False,
                compact_summary: bool = False, notified: list[str] | None = None) -> None:
        out = self.out
        if model:
            model = sys.intern(model)
            if model not in self._models:
                self._models.add(model)
                out.models.append(model)
        slot = -1
        if usage is not None:
            out.usage_lines += 1
        if role == ASSISTANT and response_id:
            slot = out.responses.add(response_id, usage, stop_reason)
        elif usage is not None:
            out.anonymous_usage.append(usage)
        tools = None
        results_only = role == USER and bool(blocks)
        for block in blocks:
            kind = block.kind
            if kind == TOOL_USE:
                out.tool_calls.append((block.ref, block.name))
                results_only = False
            elif kind != TOOL_RESULT:
                results_only = False
                continue
            if tools is None:
                tools = [block]
            else:
                tools.append(block)
        table = out.turns
        i = self._lean_turn(role, results_only, response_id, line_id, slot, model, when)
        piece = out.source.put(blocks)
        if table.spilled[i] < 0:
            table.spilled[i] = piece
        else:
            table.more.setdefault(i, []).append(piece)
        if sidechain:
            table.flags[i] |= SIDECHAIN
        if compact_summary:
            table.flags[i] |= SUMMARY
        if notified:
            table.notified[i] = [*table.notified.get(i, ()), *((a, when) for a in notified)]
        if tools is None:
            return
        lean = self.lean
        if lean.keep_tool is not None:
            tools = [block for block in tools if lean.keep_tool(block)]
            if not tools:
                return
        if role == USER:
            for block in tools:
                if block.kind == TOOL_RESULT:
                    block.when = when
        lean.strip(tools, self.line_no)
        table.tools.setdefault(i, []).extend(tools)

    def _lean_turn(self, role: str, results_only: bool, response_id: str, line_id: str,
                   slot: int, model: str, when: str) -> int:
        """The 0-based turn this line joins (the rules of ``ThreadBuilder._turn_for``),
        its model and time set from this line when it has none yet."""
        out = self.out
        table = out.turns
        if slot >= 0:
            opened = out.responses.turn[slot]
            if opened >= 0:
                table.fill(opened, model, when)
                return opened
        if results_only and table and table.flags[-1] & RESULTS_ONLY and (
                not self._pending_compaction):
            i = len(table) - 1
            table.fill(i, model, when)
            return i
        key = response_id if role == ASSISTANT and response_id else (
            f"line:{line_id}" if line_id else "")
        flags = RESULTS_ONLY if results_only else 0
        pending = self._pending_compaction
        if pending:
            flags |= COMPACTED
            self._pending_compaction = False
        i = table.new(role, key, flags, model, when)
        if pending.__class__ is str:
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
