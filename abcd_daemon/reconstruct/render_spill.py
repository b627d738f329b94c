"""The blocks of a body read lean for reconstruct, kept on disk already rendered.

A lean parse for an artefact (:class:`~.lean.Lean` with ``render_cap``) renders each
line's blocks as the line is read — :func:`~.render_blocks.render_block`, which depends
on nothing but the block and the per-block cap — and appends the Markdown, UTF-8
encoded (``"replace"`` errors, as the artefact is encoded), to a :class:`RenderSpill`:
an anonymous, owner-only temp file (unlinked at once, gone when closed or collected).
:meth:`RenderSpill.put` returns the number of a line's piece;
:meth:`RenderSpill.piece` gives back its bytes and what the cap elided from it (blocks,
bytes), so the writer copies a turn's lines into the artefact without decoding,
rebuilding or rendering anything again: the bytes :class:`~.render_turns.TurnWriter`
would have written for those blocks (``tests/reconstruct/test_lean.py``).

A long text is encoded and written in pieces, never copied whole. The file holds the
pieces back to back; where each starts (8 bytes a line) and what the cap elided from the
few it elided from are kept in memory. Pure apart from the temp file.

:func:`write_turns` writes a lean transcript's turns from such a spill: what the
writer writes for a turn — the same heading (role, compaction
summary, sidechain in the main thread, model, time), ``[COMPACTED]`` marker before and
marker lines after — with the turn's lines' bytes copied in between and what the cap
elided from them added to the writer's counts, read from the table's columns (no
:class:`~.model.Turn` built; each model labelled once).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

from .fence import label
from .lean_tables import COMPACTED, SIDECHAIN, SUMMARY, WHEN_LEN
from .model import Block
from .render_blocks import render_block
from .spill import WINDOW, SpillFile

_NONE = (0, 0)
_DOT = " · ".encode()
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
        super().__init__(directory)
        #: The per-block cap the pieces were rendered with.
        self.cap = cap
        self._held = bytearray()  # written in blocks of about a window, not line by line
        self._at = array("q")  # where each piece starts; it ends where the next starts
        self._elided: dict[int, tuple[int, int]] = {}  # piece -> (blocks, bytes), when any

    def put(self, blocks: list[Block]) -> int:
        """Render and append ``blocks`` (one line's); returns their piece's number."""
        parts: list[str] = []
        elided_blocks = elided_bytes = 0
        cap = self.cap
        for block in blocks:
            elided = render_block(parts, block, cap)
            if elided:
                elided_blocks += 1
                elided_bytes += elided
        n = len(self._at)
        self._at.append(self._end)
        if elided_blocks:
            self._elided[n] = (elided_blocks, elided_bytes)
        if not parts:
            return n
        if sum(map(len, parts)) <= _PIECE:
            held = self._held
            data = "".join(parts).encode("utf-8", "replace")
            held += data
            self._end += len(data)
            if len(held) >= WINDOW:
                self._flush()
        else:
            self._long(parts)
        return n

    def _long(self, parts: list[str]) -> None:
        """A long text: encoded and written piece by piece, never a second whole copy."""
        self._flush()
        for chunk in _encoded(parts):
            self._file.write(chunk)
            self._end += len(chunk)

    def _flush(self) -> None:
        if self._held:
            self._window = b""  # what is read back must be what was written
            self._file.write(self._held)
            self._held = bytearray()
        self._dirty = True

    def piece(self, n: int):
        """``(data, blocks elided, bytes elided)`` of the line :meth:`put` stored as
        piece ``n``; ``data`` is bytes-like, valid until the next call."""
        if self._held:
            self._flush()
        if self._dirty:
            self._file.flush()
            self._dirty = False
        at = self._at
        start = at[n]
        end = at[n + 1] if n + 1 < len(at) else self._end
        blocks, elided = self._elided.get(n, _NONE)
        return (self._read(end - start, start) if end > start else b""), blocks, elided


#: What :func:`write_turns` gathers before handing it to the writer.
_CHUNK = 1 << 20


def write_turns(writer, table, spill, indexes: Iterable[int],
                markers: dict[int, list[str]]) -> None:
    """Write the turns ``indexes`` (0-based, in order) of ``table`` through ``writer``
    (a :class:`~.render_turns.TurnWriter`), their blocks from ``spill``: encoded as the
    writer encodes (``"replace"`` errors; piece by piece is the same as whole) into a
    buffer handed over about :data:`_CHUNK` bytes at a time."""
    from .render_turns import compaction_marker

    put_bytes, piece = writer._bytes, spill.piece
    roles, role_of, models, model_of = table.roles, table.role, table.models, table.model
    when, flags, spilled, more, odd = table.when, table.flags, table.spilled, table.more, \
        table._odd_when
    compactions, visible = writer._compactions, writer._copies_visible
    heads: dict[tuple[int, int], bytes] = {}  # (role, flags) -> " — role…" encoded
    model_label: dict[int, bytes] = {}
    elided_blocks = elided_bytes = 0
    buf = bytearray()
    for i in indexes:
        n = i + 1
        f = flags[i]
        if f & COMPACTED:
            buf += compaction_marker(compactions.get(n, "")).encode("utf-8", "replace")
        head = heads.get((role_of[i], f))
        if head is None:
            role = roles[role_of[i]]
            if f & SUMMARY:
                role += " (compaction summary)"
            if f & SIDECHAIN and visible:
                role += " (sidechain)"
            head = heads[(role_of[i], f)] = f" — {role}".encode("utf-8", "replace")
        buf += b"### Turn %d" % n
        buf += head
        m = model_of[i]
        if m:
            text = model_label.get(m)
            if text is None:
                text = model_label[m] = f" · {label(models[m])}".encode("utf-8", "replace")
            buf += text
        at = WHEN_LEN * i
        if when[at]:
            buf += _DOT
            buf += when[at:at + 19]
            buf += b"Z\n\n"
        elif odd and odd.get(i):
            buf += f" · {odd[i][:19]}Z\n\n".encode("utf-8", "replace")
        else:
            buf += b"\n\n"
        for number in table.offsets(i) if i in more else (spilled[i],):
            data, blocks, elided = piece(number)
            if len(data) < _CHUNK:
                buf += data
            else:  # a long text is handed over as it is, not copied
                put_bytes(buf)
                put_bytes(data)
                buf = bytearray()
            elided_blocks += blocks
            elided_bytes += elided
        marks = markers.get(n)
        if marks:
            for mark in marks:
                buf += mark.encode("utf-8", "replace")
        if len(buf) >= _CHUNK:
            put_bytes(buf)
            buf = bytearray()
    if buf:
        put_bytes(buf)
    writer.elided_blocks += elided_blocks
    writer.elided_bytes += elided_bytes
