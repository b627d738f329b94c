"""Giving a lean transcript's turns their text back, one turn at a time, for writing.

:func:`with_text` takes the turns a writer wants (in thread order: all of them, or a
spine's first and last) and yields each with every block's ``text`` and ``raw`` as a
full parse would have them, read again from the transcript's source in one forward pass:
a line is decoded again only when a wanted block came from it, by the same adapter
(so its blocks are the ones the lean parse numbered). A turn is yielded once every line
its blocks came from has been read, and its texts are dropped again when the consumer
asks for the next one — so memory holds the texts of the turns between the one being
written and the last line read (a response whose lines are far apart holds what lies
between), never the body. The source stops being read after the last wanted turn.

A transcript that holds its texts (no source) is yielded as it is. Pure apart from the
source's reads.
"""

from __future__ import annotations

from collections.abc import Iterator

from .model import Block, Transcript, Turn


def _drop(turn: Turn) -> None:
    for block in turn.blocks:
        block.text = ""
        if b"subagent_type" not in block.raw:
            block.raw = b""


def with_text(transcript: Transcript, turns: list[Turn]) -> Iterator[Turn]:
    """``turns`` (of ``transcript``, in order) with their blocks' texts (see the module
    docstring)."""
    source = transcript.source
    if source is None:
        yield from turns
        return
    need: dict[int, list[Block]] = {}
    ready: list[int] = []  # the last line each turn waits for, as a running maximum
    last = -1
    for turn in turns:
        for block in turn.blocks:
            need.setdefault(block.line, []).append(block)
            if block.line > last:
                last = block.line
        ready.append(last)
    from .harness import adapter

    line_blocks = adapter(transcript.harness).line_blocks
    i = 0
    while i < len(turns) and ready[i] < 0:
        yield turns[i]
        _drop(turns[i])
        i += 1
    if i == len(turns):
        return
    lines = source.lines()
    try:
        for n, raw in enumerate(lines):
            blocks = need.pop(n, None)
            if blocks:
                fresh = line_blocks(raw)
                for block in blocks:
                    if block.slot < len(fresh):
                        again = fresh[block.slot]
                        block.text, block.raw = again.text, again.raw
            while i < len(turns) and ready[i] <= n:
                yield turns[i]
                _drop(turns[i])
                i += 1
            if i == len(turns):
                return
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            close()
    for turn in turns[i:]:  # the source ended early (changed under us): what it had
        yield turn
        _drop(turn)
