"""Giving a lean transcript's turns their blocks back, one turn at a time, for writing.

:func:`with_text` takes the turns a writer wants (in thread order: all of them, or a
spine's first and last) and yields, for each, a :class:`~.model.Turn` equal to the one
a full parse builds — every block, with its ``text`` and ``raw`` — read back from the
transcript's spill (:mod:`.block_spill`: the blocks of each of the turn's lines, in the
order the lines were read), never from the body, so no line is decoded twice. Each
yielded turn is built fresh and is garbage once the consumer asks for the next one:
memory holds one turn's blocks, never the body.

``cut`` > 0 reads a long text of a kind the per-block cap applies to only as far as
that cap (``Block.cut`` says how many bytes were left unread): what a writer cutting
blocks at ``cut`` bytes would keep.

A transcript that holds its texts (no spill) is yielded as it is. Pure apart from the
spill's reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .model import Transcript, Turn


def with_text(transcript: Transcript, turns: Iterable[Turn], cut: int = 0) -> Iterator[Turn]:
    """``turns`` (of ``transcript``, in order) with their blocks' texts (see the module
    docstring)."""
    spill = transcript.source
    if spill is None:
        yield from turns
        return
    table = transcript.turns
    for turn in turns:
        blocks = []
        for offset in table.offsets(turn.index - 1):
            blocks += spill.get(offset, cut)
        turn.blocks = blocks
        yield turn
