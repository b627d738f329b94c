"""Reading a body lean: the turn model without the transcript's text, for records of any
size (issue 16).

A lean parse builds the same :class:`~.model.Transcript` as a full one — the same turns,
responses, usage, tool calls, notifications and counters — but once a line has been read
every block of it drops its ``text`` (and a tool call its ``raw`` input, unless that
names a ``subagent_type``), remembering where it came from (``line``, ``slot``). What
placement reads in a tool result's text is kept as facts first: the watched agent ids it
names as whole words (``mentions``) and the id an ``agentId: `` line names (``named``).
So telemetry and placement come out identical, and the text is read again, turn by turn,
only to be written (:mod:`.refill`).

Memory is the model's structure (turns, blocks, ids), never the text. Pure.
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

    def __init__(self, agent_ids: Iterable[str]) -> None:
        self.agent_ids = sorted({a for a in agent_ids if a})
        self.matcher = ahocorasick_rs.AhoCorasick(self.agent_ids) if self.agent_ids else None

    def strip(self, blocks: list[Block], line: int) -> None:
        """Drop the text of ``blocks`` (the content of body line ``line``)."""
        for slot, block in enumerate(blocks):
            block.line = line
            block.slot = slot
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
