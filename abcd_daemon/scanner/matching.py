"""One rule's matches in one window of a buffer: the search, the masked span, the vetoes.

The engine (``engine``) decides *where* a rule is tried — a window around a keyword
hit, a hit's neighbourhood, or a whole gated line — and hands the window here.
Contract of every function: a match never crosses a line (RE2 and the bundled
patterns match no newline; a window is clipped to its line by the caller), a token a
window cut is re-matched to its line's end (:func:`to_line_end`), and a match is a
finding only when it is not masked text abcd wrote, not a placeholder, not equal to a
span a better-ranked rule already took (``ends``), and its rule's check accepts it.
The vetoes are pure functions of the line's bytes, so their order changes no outcome;
the cheap ones go first. Findings are appended to ``out`` as ``(start, end, rule
index, block)``; nothing raises on arbitrary bytes.
"""

from __future__ import annotations

import re

from .compiled import Compiled
from .escapes import ALNUM, boundary_before
from .rules import IDENTITY_KINDS
from .values import EXAMPLE_SECRETS, TOKEN_LEAD, already_masked, is_placeholder, structure_only

#: Candidates tried per hit before giving up (each a rejected match the hit is inside).
_MAX_TRIES = 16
_DELIM_SEARCH = 8192
_DELIMS = re.compile(rb"""[\s"',;<>]""")


def _not_a_value(value: bytes) -> bool:
    """abcd's own mask, or JSON structure read as a value (``values``)."""
    return already_masked(value) or structure_only(value)


def _stands_in(value: bytes, m) -> bool:
    """Text that stands for a secret: a placeholder value, or a documented example
    key matched whole (a rule may mask only part of it)."""
    return is_placeholder(value) or m.group() in EXAMPLE_SECRETS


def to_line_end(rx, buf: bytes, m, we: int):
    """``m``, re-matched to its line's end when it stopped at the window end ``we``
    short of it: an unbounded token is taken whole, never cut by a window."""
    if m.end() == we and we < len(buf) and buf[we] != 0x0A:
        le = buf.find(b"\n", we)
        return rx.match(buf, m.start(), len(buf) if le < 0 else le) or m
    return m


def refused_lead(buf: bytes, start: int, refused: frozenset[bytes]) -> bool:
    """The candidate at ``start`` (its value begins there, or after the one delimiter
    byte its match opens with) opens with one of the ``refused`` leads."""
    if buf[start] not in ALNUM:
        start += 1
    lead = TOKEN_LEAD.match(buf, start, start + 17)
    return lead is not None and lead.group().lower() in refused


def delimiter_after(buf: bytes, pos: int, n: int) -> int:
    """The offset of the first delimiter (or line end) at or after ``pos``."""
    m = _DELIMS.search(buf, pos, min(n, pos + _DELIM_SEARCH))
    return m.start() if m else min(n, pos + _DELIM_SEARCH)


def line_matches(c: Compiled, ci: int, buf: bytes, ls: int, le: int, out: list,
                 ends: dict[int, tuple[int, int]], ctx, rank: int) -> None:
    """Every acceptable match of ``c`` in ``buf[ls:le]`` (RE2, never across a
    line). The masked span is the first capture group that took part in the
    match, else the whole match; placeholders, masked text and matches the
    rule's check vetoes are not findings."""
    rx = c.rx
    pos = ls
    longest = c.rule.longest if c.linear else 0
    shortest = c.rule.shortest
    while pos < le:
        if longest:
            where = rx.bounds(buf, pos, le)
            if where is None:
                return
            if where[1] - where[0] > longest:
                pos = where[1]  # a blob, not a token: its groups are never read
                continue
            if where[1] - where[0] < shortest:
                pos = where[0] + 1  # too short a token: as if its check refused it
                continue
            if c.refused_leads is not None and refused_lead(buf, where[0], c.refused_leads):
                pos = where[1]  # a harness id: the check refuses it, its groups unread
                continue
            m = rx.match(buf, where[0], le)
        else:
            # (RE2's DFA finds the match, the capture pass runs only on it)
            m = rx.search(buf, pos, le, le) if c.linear else rx.search(buf, pos, le)
        if m is None:
            return
        m = to_line_end(rx, buf, m, le)
        pos = max(m.end(), m.start() + 1)
        span = m.span()
        for g in range(1, c.groups + 1):
            gs, ge = m.span(g)
            if ge > gs >= 0:
                span = (gs, ge)
                break
        if span[1] <= span[0]:
            continue
        got = ends.get(span[1])
        if got is not None and got[0] == span[0] and got[1] < rank:
            continue  # a rule that ranks before this one masks these very bytes
        # The vetoes are pure, so their order changes no outcome: masked text
        # first (a rescan meets mostly values it masked itself), then the check.
        value = buf[span[0] : span[1]]
        if _not_a_value(value) or (c.check is not None and not c.check(buf, m, ctx)) or _stands_in(value, m):
            # A rejected value may itself open a match (``-genkey -storepass X``:
            # ``-storepass`` was the rejected value of ``-genkey``): look again
            # from it, not from the match's end.
            if span[0] > m.start():
                pos = span[0]
            continue
        out.append((span[0], span[1], ci, None))
        ends[span[1]] = (span[0], rank)


def try_hit(c: Compiled, buf: bytes, ws: int, s: int, we: int, n: int, ctx,
            ends: dict[int, tuple[int, int]], rank: int):
    """``(match, masked span)`` for the hit at ``s``, or ``(None, skip_to)``:
    an anchored rule whose candidate was rejected may skip hits before
    ``skip_to`` (they start the same run); otherwise ``skip_to`` is 0."""
    rx = c.rx
    if c.match_only or c.anchor:
        # The match starts on the keyword, or where the keyword's run starts.
        m = rx.match(buf, ws, we)
        if m is None:
            return None, 0
        return accept(c, buf, m, we, n, ctx, ends, rank) or (None, m.end() if c.anchor else 0)
    pos = ws
    for _ in range(_MAX_TRIES):
        m = rx.search(buf, pos, we, s) if c.linear else rx.search(buf, pos, we)
        if m is None or m.start() > s:
            return None, 0
        found = accept(c, buf, m, we, n, ctx, ends, rank)
        if found:
            return found
        pos = max(m.end(), m.start() + 1)  # like finditer: never a suffix of a rejected match
        if pos > s:
            return None, 0  # a later match would not contain this hit
    return None, 0


def accept(c: Compiled, buf: bytes, m: re.Match[bytes], we: int, n: int, ctx,
           ends: dict[int, tuple[int, int]], rank: int):
    """``(match, masked span)`` when ``m`` (taken to its line's end) is a finding of
    ``c``, else None: a word rule needs a leading boundary (or a finding ending
    there), then the vetoes of the module contract."""
    m = to_line_end(c.rx, buf, m, we)
    if c.word and not boundary_before(buf, m.start()) and m.start() not in ends:
        return None  # no leading boundary, unless a finding just ended there
    # The cheap vetoes first (all are pure: the order changes no outcome); a
    # rescan meets mostly values it masked itself.
    span = m.span(c.rule.group)
    if span[0] < 0:
        # a group in an alternation that did not take part: the next one that did
        # (``'…'`` | ``"…"`` | bare), else the whole match
        span = next((m.span(g) for g in range(c.rule.group + 1, c.groups + 1) if m.start(g) >= 0), m.span())
    got = ends.get(span[1])
    if got is not None and got[0] == span[0] and got[1] < rank:
        return None  # a rule that ranks before this one masks these very bytes
    value = buf[span[0] : span[1]]
    if _not_a_value(value):
        return None
    if c.rule.kind not in IDENTITY_KINDS and not c.is_pem and _stands_in(value, m):
        return None  # ghp_XXXX…, sk_live_your_key_here, a documented key: text that stands for a secret
    if c.check is not None and not c.check(buf, m, ctx):
        return None
    return m, span
