"""Reading a body lean: the turn model without the transcript's text, for records of any
size (issue 16).

A lean parse builds the same :class:`~.model.Transcript` as a full one — the same turns,
responses, usage, tool calls, notifications and counters — held in columns by
:class:`~.lean_model.LeanThreadBuilder` (:meth:`Lean.builder`), with every line's blocks
spilled to a temp file as the line is read (:meth:`Lean.spill`): rendered with
``render_cap`` for reconstruct (:mod:`.render_spill`), else whole (:mod:`.block_spill`)
and given back, turn by turn, only to be written (:mod:`.refill`): each line is
decoded once. The tool
calls and results a lean turn keeps in memory drop their ``text`` (and a call its ``raw``
input, unless that names a ``subagent_type``) once their line is read, remembering the
line (:meth:`Lean.strip`). What placement reads in a tool result's text is kept as facts
first: the watched agent ids it names as whole words (``mentions``) and the id an
``agentId: `` line names (``named``). So telemetry and placement come out identical.

Memory is the model's columns (a few dozen bytes a turn) plus the tool blocks' ids,
never the text. Pure apart from the spill file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import ahocorasick_rs

from .model import TOOL_RESULT, TOOL_USE, Block

#: Characters that continue an id: a mention must not touch one on either side.
WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_NAMED = re.compile(r"\bagentId: ([A-Za-z0-9_-]{1,128})")


def mentions_in(matcher, agent_ids: list[str], text: str) -> Iterator[str]:
    """The agent ids (of ``agent_ids``, which ``matcher`` was built from) that occur in
    ``text`` as whole words, in order of occurrence (an id may repeat)."""
    for index, start, end in matcher.find_matches_as_indexes(text, overlapping=True):
        if (start and text[start - 1] in WORD) or (end < len(text) and text[end] in WORD):
            continue
        yield agent_ids[index]


def named_in(text: str) -> str:
    """The agent id an ``agentId: <id>`` line of a tool result names ("" when none)."""
    if "agentId: " not in text:
        return ""
    m = _NAMED.search(text)
    return m.group(1) if m else ""


class Lean:
    """What a lean parse keeps of each block (see the module docstring). ``agent_ids``
    are the ids a tool result's mentions are looked for: the session's stored agents."""

    def __init__(self, agent_ids: Iterable[str], spill_dir=None, keep_tool=None,
                 render_cap: int | None = None) -> None:
        self.agent_ids = sorted({a for a in agent_ids if a})
        self.matcher = ahocorasick_rs.AhoCorasick(self.agent_ids) if self.agent_ids else None
        #: Where the blocks' temp file goes (the system's temp directory when None).
        self.spill_dir = spill_dir
        #: Which tool blocks a turn keeps in memory (all when None): a reader that
        #: needs only some (the index: spawning calls) says which.
        self.keep_tool = keep_tool
        #: Set by a reader that only writes the artefact (reconstruct): each line's
        #: blocks are spilled already rendered with this per-block cap
        #: (:mod:`.render_spill`), not as blocks (:mod:`.block_spill`).
        self.render_cap = render_cap

    def spill(self):
        """The temp store a lean transcript's lines' blocks go to (its ``source``)."""
        if self.render_cap is not None:
            from .render_spill import RenderSpill

            return RenderSpill(self.render_cap, self.spill_dir)
        from .block_spill import BlockSpill

        return BlockSpill(self.spill_dir)

    def builder(self, harness: str):
        """The thread builder of a lean parse (:mod:`.lean_model`)."""
        from .lean_model import LeanThreadBuilder

        return LeanThreadBuilder(harness, self)

    def strip(self, blocks: list[Block], line: int) -> None:
        """Drop the text of ``blocks`` (tool blocks of body line ``line``)."""
        for block in blocks:
            block.line = line
            kind = block.kind
            if kind == TOOL_RESULT and block.text:
                text = block.text
                if self.matcher is not None:
                    block.mentions = tuple(dict.fromkeys(
                        mentions_in(self.matcher, self.agent_ids, text)))
                block.named = named_in(text)
            elif kind == TOOL_USE and b"subagent_type" not in block.raw:
                block.raw = b""
            block.text = ""


class InMemoryBody:
    """A body already in memory, read through the same ``lines()`` a stored record's
    :class:`~abcd_daemon.store.body.RecordBody` offers."""

    __slots__ = ("data", "length")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.length = len(data)

    def lines(self) -> Iterator[bytes]:
        return iter(self.data.split(b"\n"))
