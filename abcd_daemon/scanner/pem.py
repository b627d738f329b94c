"""PEM private-key blocks (reference §3.5): the header regex and the block consumer.

The header regex (``PEM_REGEX``) reaches over a body that shares the header's line
— base64 chunks joined by blanks, JSON/YAML ``\\n``/``\\r`` escapes (once or twice
escaped), the quote-and-comma run of a JSON array, ``<br>`` or ``&#10;`` — through
an END marker when there is one. Body lines of their own (a key pasted over many
lines, or the lines of a decoded JSON view) belong to :func:`consume_block`.

Block rules:
- CLOSED (an END marker reached over body-shaped lines within the bound): the lines
  are consumed with no further evidence.
- OPEN (no END — a truncated key): consumed only with evidence in the
  ``EVIDENCE_WINDOW`` lines after the header: an armour header; a base64 run of 40+
  with an alphanumeric; two consecutive body lines each with a 16+ run; or, when
  the header was *pasted* (the marker is all its line holds), a 16+ run carrying a
  digit, ``+``, ``/`` or ``=``. Otherwise the header was only *named*.
- Trailing blank lines are given back to the prose. After ``MAX_BODY_LINES`` lines
  the walk continues only over lines carrying a key run.
"""

from __future__ import annotations

import re

# A blank in a marker may be a '+' (form-encoded: a key pasted into a URL query).
_BEGIN = r"(?i:-----BEGIN[ +](?:[A-Z0-9]+[ +])*PRIVATE[ +]KEY(?:[ +]BLOCK)?-----|----[ +]BEGIN[ +](?:[A-Z0-9]+[ +])*PRIVATE[ +]KEY[ +]----)"
_END = r"(?i:-----END[ +](?:[A-Z0-9]+[ +])*PRIVATE[ +]KEY(?:[ +]BLOCK)?-----|----[ +]END[ +](?:[A-Z0-9]+[ +])*PRIVATE[ +]KEY[ +]----)"
# What joins body chunks on one line: a blank or tab, a quote or comma, an escaped
# quote (one to three backslashes), a once- or twice-escaped \n or \r, <br>, or an
# HTML newline entity. No alternative can match a real newline.
_SEP = r"""(?:[ \t,"']|\\{1,3}["']|\\{1,2}[nr]|<br[ \t]*/?>|&\#(?:1[03]|x0?[aAdD]);)"""
_CHUNK = r"[A-Za-z0-9+/=]{16,}"
_SHORT = r"[A-Za-z0-9+/=]{1,15}"
# A short final chunk of an open block that is not a word: it carries a byte a word
# cannot (a digit, '+', '/', '='). Nor is it a number standing alone: after a
# quote-and-comma separator that is the next JSON value (``["…BEGIN…\nMIIE…", 2]``),
# and masking it would break the line.
_TAIL = r"(?![0-9]+\b)[A-Za-z]{0,14}[0-9+/=][A-Za-z0-9+/=]{0,14}"
_BODY = _SEP + "*" + _CHUNK + "(?:" + _SEP + "+" + _CHUNK + ")*"
_CLOSED = _BODY + "(?:" + _SEP + "+" + _SHORT + ")?" + _SEP + "*" + _END
_OPEN = _BODY + "(?:" + _SEP + "+(?:" + _TAIL + "|" + _SHORT + r"(?=\r?\n|\Z)))?"
_EMPTY = _SEP + "*" + _END
#: The bundled pem_private_key regex (a ``str``; compiled as bytes by the engine).
PEM_REGEX = _BEGIN + "(?:" + _CLOSED + "|" + _OPEN + "|" + _EMPTY + ")?"

BEGIN_RX = re.compile(_BEGIN.encode())
END_RX = re.compile(_END.encode())
MAX_BODY_LINES = 4096
EVIDENCE_WINDOW = 2

# A line's frame: indentation, quote/diff/list markers, a line number, a timestamp,
# quotes; at the end: commas, quotes, '+', ';', escaped newlines, comments.
_LEAD = re.compile(rb"""^[ \t>|+*#-]*(?:\d+[:|]?[ \t]+)?(?:\d{4}-\d\d-\d\dT?[0-9:.]*Z?[ \t]+)?(?:\[[^\]\n]{0,40}\][ \t]*)?["'`]?""")
_TRAIL = re.compile(rb"""(?:[ \t,;+"'`]|\\{1,2}[nr]|(?:[ \t]+(?:\#|//).*))*$""")
_BASE64 = re.compile(rb"[A-Za-z0-9+/=]+")
_RUN16 = re.compile(rb"[A-Za-z0-9+/=]{16,}")
_ARMOUR = re.compile(rb"(?i:Proc-Type|DEK-Info|Version|Comment|Charset|Hash|MessageID|Subject|x-[A-Za-z0-9-]+):")


def _core(line: bytes) -> bytes:
    """The line with its frame stripped."""
    lead = _LEAD.match(line)
    start = lead.end() if lead else 0
    trail = _TRAIL.search(line, start)
    end = trail.start() if trail else len(line)
    return line[start:end]


def _classify(line: bytes) -> tuple[str, int]:
    """``(shape, longest base64 run)``; shape is end|blank|armour|body|other."""
    if END_RX.search(line):
        return "end", 0
    core = _core(line)
    if not core.strip():
        return "blank", 0
    if _ARMOUR.match(core):
        return "armour", 0
    if _BASE64.fullmatch(core):
        return "body", len(core)
    return "other", 0


def consume_block(buf: bytes, header_start: int, header_end: int, line_end: int) -> tuple[int, int, int] | None:
    """The body lines after a PEM header whose match did not reach an END marker.

    ``line_end`` is the offset of the header line's end (its ``\\n`` or ``len``).
    Returns ``(start, end, nlines)``: from the start of the first consumed line to
    the end of the last (its newline excluded; an END line ends at its marker), or ``None`` when nothing belongs to
    the block. Never raises; reads each following line once."""
    if END_RX.search(buf, header_start, header_end) or line_end >= len(buf):
        return None
    lo = max(0, header_start - 4096)
    line_start = buf.rfind(b"\n", lo, header_start) + 1 or lo
    rest = buf[header_end:line_end]
    pasted = not _core(buf[line_start:header_start]).strip() and not _core(rest).strip()
    if rest.strip(b" \t\r,;\"'`"):
        return None  # the header's line goes on with prose: a body belongs to that line
    shapes: list[tuple[int, int, str, int]] = []
    pos = line_end + 1
    closed = False
    while pos <= len(buf):
        nl = buf.find(b"\n", pos)
        end = nl if nl >= 0 else len(buf)
        shape, run = _classify(buf[pos:end].rstrip(b"\r"))
        if shape == "other" or (len(shapes) >= MAX_BODY_LINES and run < 16):
            break
        if shape == "end":
            # The block ends with its END marker, not with the marker's line: what
            # follows on it (the rest of a decoded JSON document — the next field,
            # a second key) is not the key's, and masking it would break the line.
            marker = END_RX.search(buf, pos, end).end()
            if not _TRAIL.fullmatch(buf, marker, end):
                end = marker  # only the frame (quotes, commas, escapes) may follow it
            shapes.append((pos, end, shape, run))
            closed = True
            break
        shapes.append((pos, end, shape, run))
        if nl < 0:
            break
        pos = nl + 1
    if not closed and not _evidence(shapes[:EVIDENCE_WINDOW], buf, pasted):
        return None
    while shapes and shapes[-1][2] == "blank":
        shapes.pop()
    if not shapes:
        return None
    return shapes[0][0], shapes[-1][1], len(shapes)


def _evidence(window: list[tuple[int, int, str, int]], buf: bytes, pasted: bool) -> bool:
    for i, (start, end, shape, run) in enumerate(window):
        if shape == "armour":
            return True
        if shape == "body" and run >= 40:
            return True
        if shape == "body" and run >= 16 and i + 1 < len(window):
            nxt = window[i + 1]
            if nxt[2] == "body" and nxt[3] >= 16:
                return True
        if pasted and shape == "body" and run >= 16:
            m = _RUN16.search(buf, start, end)
            if m and re.search(rb"[0-9+/=]", m.group()):
                return True
    return False
