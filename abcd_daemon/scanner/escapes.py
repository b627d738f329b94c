"""Byte-level facts about JSON escapes that detection and masking share.

Transcripts are raw JSONL, so the text a rule looks at is usually inside a JSON
string: a token can sit right after a ``\\n`` escape, a span found in a decoded view
can begin inside a ``\\u0067`` unit, and a mask that cut an escape in half would
break the line. Everything here is pure and works on ``bytes`` with offsets.

Contracts:
- :func:`boundary_before` is the leading ``\\b`` of a rule, judged in Python and
  escape-aware: the byte before ``pos`` may be the letter of an escape (``\\n``,
  ``\\t`` …) or the last hex digit of a ``\\u00XX`` that decodes to a non-word
  byte, and still count as a boundary.
- :func:`align_to_units` widens a span so it never starts or ends inside an escape
  unit (``\\X``, ``\\uXXXX``, a surrogate pair of them, or a ``%XX``) — masking
  whole units is what keeps a JSON line valid.
- :func:`string_spans` lists the JSON string tokens of one line (quotes included),
  for the mask's fallback of masking a whole string value.
- :func:`after_escape` moves a run start off the tail of an escape (the ``n`` of
  ``\\n``, the digits of ``\\u3002``), so a value right after one starts whole.
None of these raise on arbitrary bytes (invalid UTF-8, NUL, unbalanced quotes).
"""

from __future__ import annotations

import re

#: ASCII word bytes, the class ``\b`` is defined over.
WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
#: ASCII letters and digits: the class that continues a name (home anchors, names).
ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
HEX = frozenset(b"0123456789abcdefABCDEF")
#: Escape letters whose decoded byte is whitespace or punctuation (never a word byte).
_BREAKING_ESCAPES = frozenset(b'nrtbf"/\\\'')

_ESCAPE_BYTE = re.compile(rb"[\\%]")
_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"', re.S)


def boundary_before(buf: bytes, pos: int, word: frozenset[int] = WORD) -> bool:
    """True when ``pos`` starts a word: the byte before it is not in ``word``, or it
    is the tail of an escape whose decoded byte is not a word byte. Never raises."""
    if pos <= 0:
        return True
    prev = buf[pos - 1]
    if prev not in word:
        return True
    # ``\n`` / ``\\n``: the letter ends an escape when a backslash run precedes it.
    if pos >= 2 and buf[pos - 2] == 0x5C and prev in _BREAKING_ESCAPES:
        return True
    # ``\u00XX`` (any depth of backslashes): judged by the byte it decodes to.
    if pos >= 6 and buf[pos - 6] == 0x5C and buf[pos - 5] in b"uU":
        digits = buf[pos - 4 : pos]
        if all(b in HEX for b in digits):
            cp = int(digits, 16)
            return not (cp < 0x80 and cp in word)
    # ``%XX``: a percent escape decodes to a byte, judged the same way.
    if pos >= 3 and buf[pos - 3] == 0x25 and buf[pos - 2] in HEX and prev in HEX:
        return int(buf[pos - 2 : pos], 16) not in word
    return False


def boundary_after(buf: bytes, pos: int, word: frozenset[int] = ALNUM) -> bool:
    """True when the byte at ``pos`` (if any) does not continue a name in ``word``."""
    return pos >= len(buf) or buf[pos] not in word


def backslash_run(buf: bytes, end: int, floor: int = 0) -> int:
    """Length of the run of backslashes ending just before ``end`` (bounded by ``floor``)."""
    i = end
    while i > floor and buf[i - 1] == 0x5C:
        i -= 1
    return end - i


def align_to_units(buf: bytes, start: int, end: int) -> tuple[int, int]:
    """Widen ``[start, end)`` so neither edge falls inside an escape unit.

    A unit is one JSON escape of the raw text (``\\n``, ``\\\\``, ``\\"``,
    ``\\uXXXX``; a backslash run is read in pairs from its start), a
    ``\\uD8xx\\uDCxx`` surrogate pair, or a ``%XX`` percent escape. Returns the
    widened span; never narrows it; never raises."""
    n = len(buf)
    start = max(0, min(start, n))
    end = max(start, min(end, n))
    if _ESCAPE_BYTE.search(buf, start - 6 if start > 6 else 0, start + 1) is None and (
            _ESCAPE_BYTE.search(buf, end - 6 if end > 6 else 0, end + 2) is None):
        return start, end  # no escape near either edge: nothing to widen
    # start: escaped by an odd backslash run -> take the backslash.
    if _escaped(buf, start):
        start -= 1
    else:
        p = _unit_u_containing(buf, start)
        if p >= 0:
            start = p
        elif start >= 1 and buf[start - 1] == 0x25 and _hex2(buf, start):
            start -= 1
        elif start >= 2 and buf[start - 2] == 0x25 and _hex2(buf, start - 1):
            start -= 2
    # end: the last byte kept inside the span must not open a unit that runs past it.
    if end > start:
        last = end - 1
        if buf[last] == 0x5C and not _escaped(buf, last) and end < n:
            end += 1
            if buf[last + 1] in b"uU" and _hex4(buf, last + 2):
                end = last + 6
        else:
            p = _unit_u_containing(buf, end)
            if p >= 0:
                end = p + 6
            elif buf[last] == 0x25 and _hex2(buf, end):
                end += 2
            elif last >= 1 and buf[last - 1] == 0x25 and _hex2(buf, last) and end < n:
                end += 1
    return _pair_surrogates(buf, start, min(end, n))


def _escaped(buf: bytes, pos: int) -> bool:
    """True when the byte at ``pos`` is escaped by an odd run of backslashes."""
    return pos < len(buf) and backslash_run(buf, pos, max(0, pos - 4096)) % 2 == 1


def _unit_u_containing(buf: bytes, pos: int) -> int:
    """Start of a ``\\uXXXX`` unit with ``start < pos < start + 6``, else -1."""
    for p in range(max(0, pos - 5), pos):
        if buf[p] == 0x5C and buf[p + 1 : p + 2] in (b"u", b"U") and _hex4(buf, p + 2):
            if not _escaped(buf, p):
                return p
    return -1


def _hex2(buf: bytes, pos: int) -> bool:
    return pos + 2 <= len(buf) and buf[pos] in HEX and buf[pos + 1] in HEX


def _hex4(buf: bytes, pos: int) -> bool:
    return pos + 4 <= len(buf) and all(b in HEX for b in buf[pos : pos + 4])


def _pair_surrogates(buf: bytes, start: int, end: int) -> tuple[int, int]:
    # A lone half of a \uD83D\uDE00 pair would be left behind by a span that takes
    # only the other half; take both.
    if end >= 6 and _is_u(buf, end - 6, b"89ab") and _is_u(buf, end, b"cdef"):
        end += 6
    if _is_u(buf, start, b"cdef") and start >= 6 and _is_u(buf, start - 6, b"89ab"):
        start -= 6
    return start, end


def _is_u(buf: bytes, p: int, second: bytes) -> bool:
    """``buf[p:p+6]`` is ``\\uDxXX`` with x in ``second`` (a surrogate half)."""
    return (
        p >= 0
        and p + 6 <= len(buf)
        and buf[p] == 0x5C
        and buf[p + 1 : p + 2] in (b"u", b"U")
        and buf[p + 2 : p + 3] in (b"d", b"D")
        and buf[p + 3 : p + 4].lower() in [bytes([c]) for c in second]
        and _hex4(buf, p + 2)
    )


def string_spans(line: bytes) -> list[tuple[int, int]]:
    """The JSON string tokens of one line as ``(start, end)`` including quotes, in
    order. A stray quote that opens no closed string yields no span."""
    return [m.span() for m in _STRING.finditer(line)]


def after_escape(buf: bytes, ws: int, s: int) -> int:
    """Move a run start off the tail of a JSON escape: the ``n`` of ``\\n`` or the
    hex digits of ``\\u3002`` are not part of the value that follows them."""
    if ws >= s or ws == 0:
        return ws
    for p in range(max(0, ws - 5), ws):
        if buf[p] == 0x5C and buf[p + 1 : p + 2] in (b"u", b"U") and ws < p + 6 <= s:
            if all(c in HEX for c in buf[p + 2 : p + 6]):
                return p + 6
    if buf[ws - 1] == 0x5C and backslash_run(buf, ws, max(0, ws - 64)) % 2:
        return ws + 1
    return ws
