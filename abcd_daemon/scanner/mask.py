"""Stage one, masking: findings in, redacted bytes out (reference §3.4).

Discipline:
- Secret tokens are *sealed*: length-preserving, the first 3 and last 2 runes kept
  when the span holds 16 runes or more, every other byte ``*``; a shorter span, a
  span holding an escape (``\\`` or ``%``), a PEM span and the value of a
  key/value rule (``rules.WHOLE_STAR_KINDS``) are starred whole. A byte two spans
  cover is always ``*``. A kept head or tail beside a byte that continues a name
  is starred too (masking must not make a new match of its neighbour).
- Identity and network kinds get a readable placeholder, applied after the seal;
  overlapping identity spans merge into one cluster replaced once by the
  placeholder of its widest member (ties: ``rules.PLACEHOLDERS`` order).
- A PEM header whose body runs over the following lines has those lines replaced by
  one line ``[redacted-pem-body: N lines]`` (quoted as a JSON string when one of
  them was a JSON document, so the line stays valid JSON).
- :func:`fallback_line` masks whole JSON string values instead, for a line that the
  span-exact mask left unparseable.
Masking never touches bytes outside the findings' spans (whole escape units) and
the consumed PEM lines, and never raises.
"""

from __future__ import annotations

import bisect
import dataclasses

import msgspec

from .engine import Finding
from .escapes import boundary_before, string_spans
from .generic import WHOLE_STAR
from .rules import IDENTITY_KINDS, PLACEHOLDERS
from .rules import WHOLE_STAR_KINDS as _BUNDLED_WHOLE_STAR

WHOLE_STAR_KINDS = _BUNDLED_WHOLE_STAR | WHOLE_STAR

SEAL_MIN_RUNES = 16
SEAL_HEAD, SEAL_TAIL = 3, 2
_KIND_ORDER = {k: i for i, k in enumerate(PLACEHOLDERS)}
_STAR = 0x2A
#: Bytes that continue a name, an address or a host: a fingerprint never ends on
#: a kept rune beside one of them.
_GLUE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-@:+%/")


@dataclasses.dataclass(frozen=True)
class Masked:
    """The masked text and its edits ``(in_start, in_end, out_start, out_end)``, in order."""

    text: bytes
    edits: list[tuple[int, int, int, int]]


def seal(span: bytes, glued_before: bool = False, glued_after: bool = False) -> bytes:
    """Length-preserving fingerprint of a secret span. A kept head or tail that
    would glue onto a neighbouring name byte (``glued_*``) is starred too, so
    masking never creates a new match (``ab**cd.local`` must not leave
    ``cd.local`` standing as a host name)."""
    if b"\\" in span or b"%" in span:
        return b"*" * len(span)
    try:
        runes = span.decode("utf-8")
    except UnicodeDecodeError:
        runes = None
    if runes is None or len(runes) < SEAL_MIN_RUNES:
        return b"*" * len(span)
    head = 0 if glued_before else len(runes[:SEAL_HEAD].encode("utf-8"))
    tail = 0 if glued_after else len(runes[-SEAL_TAIL:].encode("utf-8"))
    return span[:head] + b"*" * (len(span) - head - tail) + span[len(span) - tail :]


def pem_placeholder(nlines: int, quoted: bool) -> bytes:
    text = b"[redacted-pem-body: %d lines]" % nlines
    return b'"' + text + b'"' if quoted else text


def mask(data: bytes, findings: list[Finding]) -> Masked:
    """Apply every finding to ``data``. ``findings`` sorted by start (as scanned)."""
    edits: list[tuple[int, int, bytes]] = []
    blocks = sorted(f.block for f in findings if f.block is not None)
    blocks = _disjoint(blocks)
    for bs, be, nlines in blocks:
        edits.append((bs, be, pem_placeholder(nlines, _any_json_line(data[bs:be]))))
    starts = [b[0] for b in blocks]
    spans = [f for f in findings if not _inside_blocks(f, blocks, starts)]
    i = 0
    while i < len(spans):
        group = [spans[i]]
        end = spans[i].end
        i += 1
        while i < len(spans) and spans[i].start < end:
            group.append(spans[i])
            end = max(end, spans[i].end)
            i += 1
        start = group[0].start
        edits.append((start, end, _replace(data, start, end, group)))
    edits.sort()
    view = memoryview(data)  # (the kept pieces are views: one copy, the output, is made)
    pieces: list[bytes | memoryview] = []
    out_edits: list[tuple[int, int, int, int]] = []
    last = 0
    out_len = 0
    for s, e, rep in edits:
        if s < last:
            continue  # never happens for disjoint edits; kept as a guard
        pieces.append(view[last:s])
        out_len += s - last
        pieces.append(rep)
        out_edits.append((s, e, out_len, out_len + len(rep)))
        out_len += len(rep)
        last = e
    pieces.append(view[last:])
    return Masked(b"".join(pieces), out_edits)


def _disjoint(blocks: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    for b in blocks:
        if out and b[0] <= out[-1][1]:
            prev = out[-1]
            if b[1] > prev[1]:
                out[-1] = (prev[0], b[1], prev[2] + b[2])
            continue
        out.append(b)
    return out


def _inside_blocks(f: Finding, blocks: list[tuple[int, int, int]], starts: list[int]) -> bool:
    """``f`` lies in a consumed block (sorted, disjoint): the block replaces it."""
    i = bisect.bisect_right(starts, f.start) - 1
    return i >= 0 and f.end <= blocks[i][1]


def _any_json_line(region: bytes) -> bool:
    for line in region.split(b"\n"):
        try:
            msgspec.json.decode(line)
            return True
        except (msgspec.DecodeError, UnicodeDecodeError, ValueError, RecursionError):
            continue
    return False


def _replace(data: bytes, start: int, end: int, group: list[Finding]) -> bytes:
    if len(group) == 1:
        f = group[0]
        if f.kind in IDENTITY_KINDS:
            return PLACEHOLDERS[f.kind]
        if f.kind in WHOLE_STAR_KINDS:
            return b"*" * (end - start)
        return seal(data[start:end], *_around(data, start, end))
    seg = bytearray(data[start:end])
    cover = [0] * (end - start)
    for f in group:
        if f.kind in IDENTITY_KINDS:
            continue
        sealed = (b"*" * (f.end - f.start) if f.kind in WHOLE_STAR_KINDS
                  else seal(data[f.start : f.end], *_around(data, f.start, f.end)))
        for j in range(f.start - start, f.end - start):
            cover[j] += 1
            seg[j] = _STAR if cover[j] > 1 else sealed[j - (f.start - start)]
    clusters: list[list[Finding]] = []
    for f in sorted((f for f in group if f.kind in IDENTITY_KINDS), key=lambda f: f.start):
        if clusters and f.start < max(g.end for g in clusters[-1]):
            clusters[-1].append(f)
        else:
            clusters.append([f])
    for cluster in reversed(clusters):
        cs = min(f.start for f in cluster) - start
        ce = max(f.end for f in cluster) - start
        widest = min(cluster, key=lambda f: (-(f.end - f.start), _KIND_ORDER.get(f.kind, 99)))
        seg[cs:ce] = PLACEHOLDERS[widest.kind]
    return bytes(seg)


def _around(data: bytes, start: int, end: int) -> tuple[bool, bool]:
    """Whether the bytes just outside ``[start, end)`` continue a name (an escape
    before it, such as the ``n`` of ``\\n``, does not)."""
    return not boundary_before(data, start, _GLUE), end < len(data) and data[end] in _GLUE


def fallback_line(line: bytes, spans: list[tuple[int, int]]) -> bytes | None:
    """Mask, on the ORIGINAL ``line``, the whole content of every JSON string value a
    span touches (stars, same length). Structural bytes a span also covers (quotes,
    ``:``, ``,``, blanks) are kept: they carry nothing, and so are the numbers and
    literals a span only crosses between two strings (``["…BEGIN…", 2, "…END…"]``: a
    key over an array's strings; the ``2`` is the array's, not the key's). None when
    the span's first or last letter or digit lies outside every string — the finding
    itself is a number or literal (``"port": 8080``), which no mask can keep valid."""
    strings = string_spans(line)
    out = bytearray(line)
    for s, e in spans:
        touched = [(a, b) for a, b in strings if a < e and s < b]
        outside = bytearray(line[s:e])
        for a, b in touched:
            lo, hi = max(a, s), min(b, e)
            outside[lo - s : hi - s] = b" " * (hi - lo)
            out[a + 1 : b - 1] = b"*" * (b - a - 2)
        alnum = [i for i, c in enumerate(line[s:e]) if c in _ALNUM]
        if alnum and (outside[alnum[0]] in _ALNUM or outside[alnum[-1]] in _ALNUM):
            return None
    return bytes(out)


_ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
