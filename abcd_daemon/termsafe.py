"""Terminal and document safety for text that somebody else chose the bytes of.

Two filters, both pure:
- :func:`clean_line` for a label printed outside a fence or on one terminal line: line
  breaks become spaces; control, bidi-override and zero-width characters are masked;
  an HTML opener and a Markdown link joint ``](`` are broken; the result is capped.
- :func:`sanitize_block` for a whole block sent to a terminal (stdout): keeps line
  structure (``\\n`` and tabs) and makes every other control character visible instead
  of executable, so stored transcript text cannot drive the terminal.
Neither ever raises; both accept ``str`` only (decode bytes with ``errors="replace"``).
"""

from __future__ import annotations

import re

#: Bidi embeddings/overrides/isolates and zero-width characters: they reorder or hide
#: what a reader sees.
_INVISIBLE = "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
_C0_PICTURE = {i: chr(0x2400 + i) for i in range(0x20) if i not in (0x09, 0x0A)}
_C0_PICTURE[0x7F] = "\u2421"
_BLOCK_TABLE = dict(_C0_PICTURE)
_BLOCK_TABLE.update({i: "\ufffd" for i in range(0x80, 0xA0)})
_BLOCK_TABLE.update({ord(c): "\ufffd" for c in _INVISIBLE})

_LINE_TABLE = dict(_BLOCK_TABLE)
_LINE_TABLE.update({0x0A: " ", 0x0D: " ", 0x09: " ", 0x2028: " ", 0x2029: " ", 0x85: " "})

_HTML_OPENER = re.compile(r"<(?=[A-Za-z!/?])")


def sanitize_block(text: str) -> str:
    """Return ``text`` with terminal control characters made visible; ``\\n`` and tabs
    kept, so line structure survives."""
    return text.translate(_BLOCK_TABLE)


def clean_line(text: str, cap: int = 512) -> str:
    """Return ``text`` as one safe line of at most ``cap`` UTF-8 bytes (``…`` marks a cut)."""
    out = text.translate(_LINE_TABLE)
    out = _HTML_OPENER.sub("< ", out).replace("](", "] (")
    encoded = out.encode("utf-8")
    if len(encoded) > cap:
        out = encoded[: max(cap - 3, 0)].decode("utf-8", errors="ignore") + "…"
    return out
