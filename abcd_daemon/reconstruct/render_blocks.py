"""Rendering one content block: the fenced writer applied to each kind, and the cap.

Rules (reference §6.4; DESIGN §5 invariant 7):
- Every block goes through the one fenced writer (:func:`~.fence.fenced`) — text
  included; labels outside fences go through :func:`~.fence.label`/:func:`~.fence.code`.
  Thinking is rendered, its signature never; images are named, not carried.
- The per-block cap (``cap`` > 0) applies to thinking, tool inputs, tool results and
  other-typed blocks — never to plain text. A capped block keeps its first ``cap`` bytes
  (cut on a character boundary); the line after its fence says how many bytes were
  elided. That line is outside the fence because it is this document speaking. A block
  whose text was read back already cut (``Block.cut``, :mod:`.block_spill`) is written
  as that cut.
- A text block of whitespace alone is not rendered (it would be an empty fence).

:func:`render_block` depends on nothing but the block and the cap, so a block can be
rendered as soon as its line is read (:mod:`.render_spill`) or when its turn is written:
the same pieces either way. Pure; appends ``str`` pieces to a list (a long text is one
piece of its own, never copied into a larger string) and returns what it elided.
"""

from __future__ import annotations

import msgspec

from .fence import code, fenced, label
from .model import IMAGE, TEXT, THINKING, TOOL_RESULT, TOOL_USE, Block

IMAGE_LINE = "*(an image block was here; images are not carried into the artefact)*\n\n"


def _pretty(raw: bytes) -> str:
    """A tool input pretty-printed with a 2-space indent (raw text if not JSON)."""
    if raw in (b"", b"{}", b"null"):
        return "{}"
    try:
        return msgspec.json.format(raw, indent=2).decode("utf-8", "replace")
    except (msgspec.DecodeError, ValueError):
        return raw.decode("utf-8", "replace")


def _elision(out: list[str], elided: int) -> None:
    out.append(f"… [{elided} bytes elided by the per-block cap]\n\n")


def capped(out: list[str], text: str, cap: int, lang: str = "", cut: int = 0) -> int:
    """Append ``text`` fenced, truncated to ``cap`` bytes with an elision line; ``cut``:
    ``text`` is already the cap's cut, that many bytes were left unread. Returns the
    bytes elided (0: the block was written whole)."""
    if cut:
        out.extend(fenced(text, lang))
        _elision(out, cut)
        return cut
    kept = text
    if cap:
        if text.isascii():  # a character is a byte: no encoding needed to measure
            if len(text) > cap:
                kept = text[:cap]
        elif len(text) > cap // 4:
            data = text.encode("utf-8", "replace")
            if len(data) > cap:
                kept = data[:cap].decode("utf-8", "ignore")
    if kept is text:
        out.extend(fenced(text, lang))
        out.append("\n")
        return 0
    elided = (len(text) - len(kept) if text.isascii() else
              len(text.encode("utf-8", "replace")) - len(kept.encode("utf-8")))
    out.extend(fenced(kept, lang))
    _elision(out, elided)
    return elided


def render_block(out: list[str], block: Block, cap: int) -> int:
    """Append ``block`` rendered (see the module docstring) to ``out``; returns the
    bytes the cap elided from it (0: none — a capped block always loses at least one)."""
    kind = block.kind
    if kind == TOOL_RESULT:
        ref = block.ref
        head = f"**tool result** for {code(ref) if ref else '(no call id)'}"
        out.append(head + " (error)\n\n" if block.is_error else head + "\n\n")
        return capped(out, block.text, cap, cut=block.cut)
    if kind == TOOL_USE:
        name, ref = block.name, block.ref
        call = f"**tool call** {code(name) if name else '(unnamed)'}"
        out.append(f"{call} ({code(ref)})\n\n" if ref else call + "\n\n")
        return capped(out, _pretty(block.raw), cap, "json")
    if kind == TEXT:
        text = block.text
        if text and not text.isspace():  # whitespace alone says nothing: no empty fence
            out.extend(fenced(text))
            out.append("\n")
        return 0
    if kind == THINKING:
        if block.text or block.cut:
            out.append("*thinking:*\n\n")
            return capped(out, block.text, cap, cut=block.cut)
        return 0
    if kind == IMAGE:
        out.append(IMAGE_LINE)
        return 0
    out.append(f"*({label(kind)})*\n\n")
    if block.text or block.cut:
        return capped(out, block.text, cap, cut=block.cut)
    return 0
