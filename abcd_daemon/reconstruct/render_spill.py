"""The blocks of a body read lean for reconstruct, kept on disk already rendered.

A lean parse for an artefact (:class:`~.lean.Lean` with ``render_cap``) renders each
line's blocks as the line is read — :func:`~.render_blocks.render_block`, which depends
on nothing but the block and the per-block cap — and appends the Markdown, UTF-8
encoded (``"replace"`` errors, as the artefact is encoded), to a :class:`RenderSpill`:
an anonymous, owner-only temp file (unlinked at once, gone when closed or collected).
:meth:`RenderSpill.put` returns the offset a line's piece starts at;
:meth:`RenderSpill.piece` gives back its bytes and what the cap elided from it (blocks,
bytes), so the writer copies a turn's lines into the artefact without decoding,
rebuilding or rendering anything again: the bytes :class:`~.render_turns.TurnWriter`
would have written for those blocks (``tests/reconstruct/test_lean.py``).

A long text is encoded and written in pieces, never copied whole. Record layout at an
offset: a 20-byte little-endian header (piece length, blocks elided, bytes elided), then
the piece. Pure apart from the temp file.

:func:`write_turns` writes a lean transcript's turns from such a spill: what the
writer writes for a turn — the same heading (role, compaction
summary, sidechain in the main thread, model, time), ``[COMPACTED]`` marker before and
marker lines after — with the turn's lines' bytes copied in between and what the cap
elided from them added to the writer's counts, read from the table's columns (no
:class:`~.model.Turn` built; each model labelled once).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from .fence import label
from .lean_tables import COMPACTED, SIDECHAIN, SUMMARY, WHEN_LEN
from .model import Block
from .render_blocks import render_block
from .spill import WINDOW, SpillFile

_HEAD = struct.Struct("<QIQ")
#: A rendered line longer than this many characters is encoded in pieces of this size.
_PIECE = 1 << 22


def _encoded(parts: list[str]):
    """``parts`` UTF-8 encoded, a long one in pieces of :data:`_PIECE` characters (a
    Python string has no multi-unit character a cut could split)."""
    for part in parts:
        for i in range(0, len(part), _PIECE):
            yield part[i:i + _PIECE].encode("utf-8", "replace")


class RenderSpill(SpillFile):
    """Append-only store of lines' rendered blocks (see the module docstring)."""

    def __init__(self, cap: int, directory=None) -> None:
        #: The per-block cap the pieces were rendered with.
        super().__init__(directory)
        self.cap = cap
        self._held = bytearray()  # written in blocks of about a window, not line by line

    def put(self, blocks: list[Block]) -> int:
        """Render and append ``blocks`` (one line's); returns their offset."""
        parts: list[str] = []
        elided_blocks = elided_bytes = 0
        cap = self.cap
        for block in blocks:
            elided = render_block(parts, block, cap)
            if elided:
                elided_blocks += 1
                elided_bytes += elided
        offset = self._end
        self._window = b""  # what is read back must be what was written
        held = self._held
        if sum(map(len, parts)) <= _PIECE:
            data = "".join(parts).encode("utf-8", "replace")
            held += _HEAD.pack(len(data), elided_blocks, elided_bytes)
            held += data
            self._end += _HEAD.size + len(data)
            if len(held) >= WINDOW:
                self._flush()
        else:  # a long text: encoded piece by piece, never a second whole copy
            self._flush()
            size = sum(len(chunk) for chunk in _encoded(parts))
            self._file.write(_HEAD.pack(size, elided_blocks, elided_bytes))
            for chunk in _encoded(parts):
                self._file.write(chunk)
            self._end += _HEAD.size + size
        return offset

    def _flush(self) -> None:
        if self._held:
            self._file.write(self._held)
            self._held = bytearray()
        self._dirty = True

    def piece(self, offset: int):
        """``(data, blocks elided, bytes elided)`` of the line :meth:`put` stored at
        ``offset``; ``data`` is bytes-like, valid until the next call."""
        if self._held:
            self._flush()
        if self._dirty:
            self._file.flush()
            self._dirty = False
        size, blocks, elided = _HEAD.unpack(self._read(_HEAD.size, offset))
        return self._read(size, offset + _HEAD.size), blocks, elided


def write_turns(writer, table, spill, indexes: Iterable[int],
                markers: dict[int, list[str]]) -> None:
    """Write the turns ``indexes`` (0-based, in order) of ``table`` through ``writer``
    (a :class:`~.render_turns.TurnWriter`), their blocks from ``spill``."""
    from .render_turns import compaction_marker

    out, put_bytes, piece = writer.parts, writer._bytes, spill.piece
    roles, role_of, models, model_of = table.roles, table.role, table.models, table.model
    when, flags, spilled, more, odd = table.when, table.flags, table.spilled, table.more, \
        table._odd_when
    compactions, visible = writer._compactions, writer._copies_visible
    model_label: dict[int, str] = {}
    elided_blocks = elided_bytes = 0
    for i in indexes:
        n = i + 1
        role = roles[role_of[i]]
        f = flags[i]
        if f:
            if f & COMPACTED:
                out.append(compaction_marker(compactions.get(n, "")))
            if f & SUMMARY:
                role += " (compaction summary)"
            if f & SIDECHAIN and visible:
                role += " (sidechain)"
        heading = f"### Turn {n} — {role}"
        m = model_of[i]
        if m:
            text = model_label.get(m)
            if text is None:
                text = model_label[m] = f" · {label(models[m])}"
            heading += text
        at = WHEN_LEN * i
        if when[at]:
            heading += f" · {when[at:at + 19].decode('ascii')}Z"
        elif odd and odd.get(i):
            heading += f" · {odd[i][:19]}Z"
        out.append(heading + "\n\n")
        for offset in table.offsets(i) if i in more else (spilled[i],):
            data, blocks, elided = piece(offset)
            put_bytes(data)
            elided_blocks += blocks
            elided_bytes += elided
        marks = markers.get(n)
        if marks:
            out.extend(marks)
    writer.elided_blocks += elided_blocks
    writer.elided_bytes += elided_bytes
