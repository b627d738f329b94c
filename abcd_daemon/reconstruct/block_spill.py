"""The blocks of a body read lean, kept on disk until they are written (issue 16).

A lean parse (:mod:`.lean_model`) decodes each line once. What only the writer needs of a
line's blocks — kind, text, tool name, call id, input, error flag — goes to a
:class:`BlockSpill`: an anonymous, owner-only temp file (unlinked at once, gone when
closed or collected), appended to as the body is read. :meth:`BlockSpill.put` returns
the offset a line's blocks start at; :meth:`BlockSpill.get` gives them back as
:class:`~.model.Block` values equal to the ones the parse built (text and input byte for
byte: texts are stored UTF-8 with ``surrogatepass``, so any ``str`` round-trips).

``get(offset, cut=N)`` reads a long text only as far as a writer cutting it to ``N``
bytes needs: a block whose text is over ``N`` UTF-8 bytes comes back with its first
``N`` bytes (decoded, a split character dropped) and ``Block.cut`` set to how many bytes
were left unread — what the per-block cap would elide. So memory for a long line is what
is written, not the line. ``cut`` applies only to the kinds the cap applies to (never
``text``, never a tool call's input, which is pretty-printed whole).

Record layout at an offset: a 4-byte little-endian header length, the msgpack header (per
block ``[kind, name, ref, is_error, text_bytes, raw_bytes]``), then each block's text and
input bytes in order. Pure apart from the temp file.
"""

from __future__ import annotations

import msgspec

from .model import TEXT, TOOL_USE, Block
from .spill import SpillFile

_ENCODE = msgspec.msgpack.Encoder().encode
_DECODE = msgspec.msgpack.Decoder(list[tuple[str, str, str, bool, int, int]]).decode
#: A text longer than this is encoded and written in pieces of this many characters.
_PIECE = 1 << 22


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class BlockSpill(SpillFile):
    """Append-only store of lines' blocks (see the module docstring)."""

    def put(self, blocks: list[Block]) -> int:
        """Append ``blocks`` (one line's); returns their offset."""
        offset = self._end
        self._window = b""  # what is read back must be what was written
        if len(blocks) == 1 and len(blocks[0].text) <= _PIECE:  # the common case
            b = blocks[0]
            text = _utf8(b.text)
            header = _ENCODE(((b.kind, b.name, b.ref, b.is_error, len(text), len(b.raw)),))
            data = b"".join((len(header).to_bytes(4, "little"), header, text, b.raw))
            self._file.write(data)
            self._end += len(data)
            self._dirty = True
            return offset
        parts = []
        sizes = []
        for block in blocks:
            text = block.text
            if len(text) <= _PIECE:
                data = _utf8(text)
                parts.append(data)
                sizes.append(len(data))
            else:  # a long text: written in pieces, never a second whole copy of it
                parts.append(text)
                sizes.append(len(text) if text.isascii() else sum(
                    len(_utf8(text[i:i + _PIECE])) for i in range(0, len(text), _PIECE)))
            parts.append(block.raw)
        header = _ENCODE([(b.kind, b.name, b.ref, b.is_error, n, len(b.raw))
                          for b, n in zip(blocks, sizes)])
        write = self._file.write
        if all(type(p) is bytes for p in parts):
            data = b"".join((len(header).to_bytes(4, "little"), header, *parts))
            write(data)
            self._end += len(data)
        else:
            write(len(header).to_bytes(4, "little"))
            write(header)
            for part in parts:
                if type(part) is bytes:
                    write(part)
                else:
                    for i in range(0, len(part), _PIECE):
                        write(_utf8(part[i:i + _PIECE]))
            self._end += 4 + len(header) + sum(sizes) + sum(len(b.raw) for b in blocks)
        self._dirty = True
        return offset

    def get(self, offset: int, cut: int = 0) -> list[Block]:
        """The blocks :meth:`put` stored at ``offset``; ``cut`` > 0: see the module
        docstring."""
        if self._dirty:
            self._file.flush()
            self._dirty = False
        read = self._read
        size = int.from_bytes(read(4, offset), "little")
        at = offset + 4
        header = _DECODE(read(size, at))
        at += size
        out = []
        for kind, name, ref, is_error, n, r in header:
            block = Block(kind, name=name, ref=ref, is_error=is_error)
            if cut and n > cut and kind != TEXT and kind != TOOL_USE:
                block.text = str(read(cut, at), "utf-8", "ignore")
                block.cut = n - len(_utf8(block.text))
            elif n:
                block.text = str(read(n, at), "utf-8", "surrogatepass")
            at += n
            if r:
                block.raw = bytes(read(r, at))
            at += r
            out.append(block)
        return out
