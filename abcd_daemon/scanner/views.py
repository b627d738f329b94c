"""Decoded views of a stretch of raw bytes, with a map back to raw byte spans.

A secret can be spelled through escapes the rules cannot see on the raw bytes: a
``\\u0067hp_…`` token, an address behind ``%40``, a string serialised inside a
string. A :class:`View` is one decoding layer over a stretch of text plus a map
from every view byte back to the raw unit it came from; a hit in a view is masked
on the raw bytes as the whole escape units it covers (reference §3.6, gh-370).

- :func:`json_layer` decodes one JSON layer: ``\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX``
  (surrogate pairs combined; lone surrogates and unknown escapes kept as they are).
- :func:`percent_layer` decodes ``%XX``.
- :func:`views_for` yields the layers the engine scans: up to three JSON layers (a
  layer that changes nothing ends the walk), the percent view of the raw text, and
  the compositions once each way (percent of JSON, JSON of percent).
- :func:`view_ranges` picks the stretches of text worth a view: around the
  triggers the prefilter found, per line.
Views never raise on arbitrary bytes.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from .escapes import HEX, align_to_units

MAX_JSON_LAYERS = 3
#: How much of a trigger's line a view covers (see :func:`view_ranges`).
VIEW_NEAR = 512
VIEW_AFTER_PEM = 4096

_JSON_ESC = re.compile(
    rb"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|\\u([0-9a-fA-F]{4})|\\([\"\\/bfnrt])"
)
_SIMPLE = {b'"': b'"', b"\\": b"\\", b"/": b"/", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t"}
_PCT = re.compile(rb"%([0-9a-fA-F]{2})")


class View:
    """Decoded bytes ``text`` of raw ``[base, base+len)`` with a segment map.

    Segments are ``(view_start, raw_start, raw_end, literal)``: a literal segment
    maps byte for byte; a unit segment maps all its view bytes to one raw unit."""

    __slots__ = ("text", "_vstarts", "_segs")

    def __init__(self, text: bytes, segs: list[tuple[int, int, int, bool]]) -> None:
        self.text = text
        self._segs = segs
        self._vstarts = [s[0] for s in segs]

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """Map view ``[start, end)`` (``end > start``) to the raw span of whole units."""
        return self._raw_start(start), self._raw_end(end - 1)

    def _seg(self, v: int) -> tuple[int, int, int, bool]:
        return self._segs[max(0, bisect.bisect_right(self._vstarts, v) - 1)]

    def _raw_start(self, v: int) -> int:
        vs, rs, re_, literal = self._seg(v)
        return rs + (v - vs) if literal else rs

    def _raw_end(self, v: int) -> int:
        vs, rs, re_, literal = self._seg(v)
        return rs + (v - vs) + 1 if literal else re_

    def compose(self, inner: "View") -> "Composed":
        """A view of this view (``inner``'s raw is ``self.text``) mapped to our raw."""
        return Composed(inner, self)


class Composed:
    """``inner`` decoded from ``outer.text``; spans map through both, lazily (only
    hits are mapped, so composing costs nothing up front)."""

    __slots__ = ("text", "_inner", "_outer")

    def __init__(self, inner: View, outer: "View | Composed") -> None:
        self.text = inner.text
        self._inner = inner
        self._outer = outer

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        a, b = self._inner.raw_span(start, end)
        return self._outer.raw_span(a, b)

    def compose(self, inner: View) -> "Composed":
        return Composed(inner, self)


def _layer(raw: bytes, base: int, rx: re.Pattern[bytes], decode) -> View | None:
    pieces: list[bytes] = []
    segs: list[tuple[int, int, int, bool]] = []
    vpos = 0
    last = 0
    for m in rx.finditer(raw):
        out = decode(m)
        if out is None:
            continue
        s, e = m.span()
        if s > last:
            segs.append((vpos, base + last, base + s, True))
            pieces.append(raw[last:s])
            vpos += s - last
        segs.append((vpos, base + s, base + e, False))
        pieces.append(out)
        vpos += len(out)
        last = e
    if not segs:
        return None
    if last < len(raw):
        segs.append((vpos, base + last, base + len(raw), True))
        pieces.append(raw[last:])
    return View(b"".join(pieces), segs)


def _json_unit(m: re.Match[bytes]) -> bytes | None:
    if m.group(1):
        hi, lo = int(m.group(1), 16), int(m.group(2), 16)
        return chr(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)).encode()
    if m.group(3):
        cp = int(m.group(3), 16)
        if 0xD800 <= cp <= 0xDFFF:
            return None  # a lone surrogate is kept as it is
        return chr(cp).encode()
    return _SIMPLE[m.group(4)]


def json_layer(raw: bytes, base: int = 0) -> View | None:
    """One JSON-unescape layer over ``raw`` (which sits at ``base``); None if no escape."""
    return _layer(raw, base, _JSON_ESC, _json_unit)


def percent_layer(raw: bytes, base: int = 0) -> View | None:
    """One percent-decode layer over ``raw``; None if no ``%XX``."""
    return _layer(raw, base, _PCT, lambda m: bytes([int(m.group(1), 16)]))


def views_for(raw: bytes, base: int = 0) -> Iterator[View | Composed]:
    """The decoded views of ``raw`` to scan, each mapped to offsets ``base + i``."""
    j1 = json_layer(raw, base)
    layer = j1
    for _ in range(MAX_JSON_LAYERS):
        if layer is None:
            break
        yield layer
        inner = json_layer(layer.text)
        layer = layer.compose(inner) if inner is not None else None
    if b"%" in raw:
        p0 = percent_layer(raw, base)
        if p0 is not None:
            yield p0
            if b"\\" in p0.text:
                jp = json_layer(p0.text)
                if jp is not None:
                    yield p0.compose(jp)
    if j1 is not None and b"%" in j1.text:
        pj = percent_layer(j1.text)
        if pj is not None:
            yield j1.compose(pj)


def view_ranges(buf: bytes, marks: list[int]) -> list[tuple[int, int]]:
    """The stretch around each view trigger, clipped to the trigger's line, merged
    with the stretches of the same line it meets, and widened to whole escape units:
    ``VIEW_NEAR`` bytes either side of an escape (a token, address or URL spelled
    with it sits that close), and ``VIEW_AFTER_PEM`` after a PEM marker (its body
    follows it). Line-local: a line's stretches depend only on that line."""
    out: list[tuple[int, int]] = []
    n = len(buf)
    cur: list[int] | None = None  # [line_start, line_end, start, end]
    floor = 0
    for pos in sorted(marks):
        if buf[pos] == 0x25 and not (pos + 2 < n and buf[pos + 2] in HEX):
            continue  # '%2' not followed by a hex digit is no escape
        after = VIEW_AFTER_PEM if buf[pos] == 0x2D else VIEW_NEAR
        if cur is None or pos >= cur[1]:
            if cur is not None:
                out.append(_finish(buf, cur))
                floor = cur[1]
            ls = buf.rfind(b"\n", floor, pos) + 1 or floor
            le = buf.find(b"\n", pos)
            le = n if le < 0 else le
            cur = [ls, le, max(ls, pos - VIEW_NEAR), min(le, pos + after)]
            continue
        start = max(cur[0], pos - VIEW_NEAR)
        if start > cur[3]:
            out.append(_finish(buf, cur))
            cur = [cur[0], cur[1], start, min(cur[1], pos + after)]
        else:
            cur[3] = max(cur[3], min(cur[1], pos + after))
    if cur is not None:
        out.append(_finish(buf, cur))
    return out


def _finish(buf: bytes, cur: list[int]) -> tuple[int, int]:
    ls, le, start, end = cur
    if start > ls:
        start = align_to_units(buf, start, start + 1)[0]
    if end < le:
        end = min(le, align_to_units(buf, end - 1, end)[1])
    return start, end
