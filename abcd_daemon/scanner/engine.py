"""Stage-one detection: bytes in, findings out.

Per buffer: one Vectorscan pass per line (``gate``) says which gated rules match
on each line; the Aho-Corasick prefilter over lower-cased windows (``prefilter``)
gives every keyword hit with the rules worth trying there — a gated rule only on a
line the gate names, so the loop never sees the hits of a rule that cannot match on
their line. Each rule's regex then runs only in a bounded window around its own hits
(``rules`` module docstring states the window contract), with a per-rule high-water
mark so overlapping hits do not rescan; a provider rule, and a generic rule that
says ``search="neighbourhood"``, once per neighbourhood of its hits instead; a
keyword-less rule is searched over the lines the gate names for it (where a rule is
tried is decided here; how one window is matched and vetoed, in ``matching``). Lines holding a
view trigger are also scanned through their decoded views (``views``) and the hits
mapped back to whole raw escape units.

What is gated (``Scanner.__init__``): the ruleset and our generic rules by their
RE2 pattern (RE2 judges assertions on the whole buffer, so a window never makes a
match the line does not have), our bundled ``re`` rules by
``gate.superset_pattern`` (every assertion removed: a superset in any window), and a
rule with a ``gate`` field by that pattern — one that matches wherever the rule's
check can accept (net_ipv6, prefixed_token, the stars-only values of the assignment
rules). Identity literals and additions are not gated, nor a pattern Vectorscan
cannot take. Gated and ungated scans find the same spans: ``test_gate`` (real
transcripts, the labelled corpus, generated text).

Line locality (what lets stage two rescan only changed lines): a finding lies
inside one line, and whether a span of a line is a finding depends only on that
line's bytes and the scanner — no bundled regex matches a newline (tested), an
addition's window is clipped to its line, look-back windows stop at the line start,
predicates read only the line, views are built from the trigger's line. A PEM
block's *body consumption* (the lines after an unclosed header) is the one
multi-line effect; it is carried on the header's finding and applied by the mask.
Tested on the real corpus and on generated text (``test_pipeline``).

Never raises on arbitrary bytes; ``tick`` (the deadline) is called every
``_TICK_EVERY`` hits, every few hundred gate lines, once per keyword-less rule and
once per view.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from .checks import Context
from .compiled import GATED_SOURCES, PROVIDER_BACK, PROVIDER_REACH, Compiled, Finding
from .gate import Gate, superset_pattern
from .escapes import after_escape, align_to_units, backslash_run
from .matching import delimiter_after, line_matches, try_hit
from .spaced import spaced
from .pem import consume_block
from .prefilter import VIEW, Prefilter
from .rules import PLACEHOLDERS, Rule
from .views import view_ranges, views_for
from .windows import lowered_windows

#: Kinds of the shape-only generic rules (``generic``: bare_token, prefixed_body).
FALLBACK_KINDS = frozenset({"token:bare", "token:prefixed_body"})
#: A shape rule's span yields to other rules' spans that leave at most this many
#: of its bytes uncovered (``gho_…_old``: the GitHub rule's finding, not a bare one).
FALLBACK_SLACK = 8

_TICK_EVERY = 1024
_LAST = 1 << 30  # the rank of a shape rule: after every other rule


def _merge_lines(a: list, b: list, shift: int) -> list:
    """Two gates' ``(line_start, line_end, positions)`` lists (sorted, over the same
    lines) as one, ``b``'s positions shifted by ``shift``."""
    if not b:
        return a
    out, i, j = [], 0, 0
    while i < len(a) or j < len(b):
        if j >= len(b) or (i < len(a) and a[i][0] < b[j][0]):
            out.append(a[i])
            i += 1
            continue
        moved = frozenset(x + shift for x in b[j][2])
        if i < len(a) and a[i][0] == b[j][0]:
            out.append((a[i][0], a[i][1], a[i][2] | moved))
            i += 1
        else:
            out.append((b[j][0], b[j][1], moved))
        j += 1
    return out


def _yield_fallbacks(spans: list, fallback: frozenset[int]) -> list:
    """``spans`` (sorted ``(start, -end, prio, ci, block)``) without the fallback
    rules' spans that other rules' spans cover but for ``FALLBACK_SLACK`` bytes."""
    others = [(s, -ne) for s, ne, _, ci, _ in spans if ci not in fallback]
    if len(others) == len(spans):
        return spans
    starts = [s for s, _ in others]
    kept = []
    for h in spans:
        if h[3] in fallback:
            s, e = h[0], -h[1]
            covered, pos = 0, s
            for os_, oe in others[bisect.bisect_left(starts, s - 65536) : bisect.bisect_left(starts, e)]:
                lo, hi = max(os_, pos), min(oe, e)
                if hi > lo:
                    covered += hi - lo
                    pos = hi
            if covered and e - s - covered <= FALLBACK_SLACK:
                continue
        kept.append(h)
    return kept


HOME_SELF = "home_path_self"


class Scanner:
    """A compiled rule set. ``degraded`` is ``""`` when whole, else why it is not
    (a degraded scanner still scans, but ``redact_text`` refuses to use it)."""

    def __init__(self, rules: Sequence[Rule], ctx: Context, degraded: str = "", label: str = "",
                 gate_cache: str | None = None, gated: bool = True) -> None:
        self.degraded = degraded
        #: What redacted with it, for records' ``scanner:`` field ("" when degraded).
        self.label = label
        self.rules = tuple(rules)
        self._ctx = ctx
        self._comp = [Compiled(r) for r in self.rules]
        # Rules with no keyword the prefilter could use run over every line.
        self._every_line = [i for i, c in enumerate(self._comp) if c.whole_line and not c.rule.keywords]
        # Gated rules are tried only on a line where one Vectorscan pass says they
        # match (``gate``): the ruleset and our generic rules by their own (RE2)
        # pattern, our bundled ``re`` rules by a superset pattern (assertions
        # removed: ``gate.superset_pattern``). Identity literals and additions are not.
        # Two databases, because the two kinds of rule read different bytes: the
        # ruleset and the generic rules match the ``spaced`` copy, our own ``re``
        # rules the raw buffer — each is gated on what it reads. Positions of the
        # raw gate's patterns follow the spaced gate's (one numbering, one line list).
        spaced_c: list[tuple[int, str]] = []
        raw_c: list[tuple[int, str]] = []
        for i, r in enumerate(self.rules):
            if not gated or not r.regex or not r.gated:
                continue
            if r.source in GATED_SOURCES:
                spaced_c.append((i, r.gate or r.regex))
            elif r.source == "":
                pattern = superset_pattern(r.gate or r.regex, r.ignorecase)
                if pattern is not None:
                    raw_c.append((i, pattern))
        self._gate = Gate([p for _, p in spaced_c], gate_cache) if spaced_c else None
        self._raw_gate = Gate([p for _, p in raw_c], gate_cache) if raw_c else None
        self._raw_shift = len(spaced_c)
        ungated = set(self._gate.ungated) if self._gate is not None else set()
        if self._raw_gate is not None:
            ungated |= {j + self._raw_shift for j in self._raw_gate.ungated}
        candidates = spaced_c + raw_c
        #: rule index -> its position in the gates (a rule a gate cannot take is ungated)
        self._gated_pos = {ci: j for j, (ci, _) in enumerate(candidates) if j not in ungated}
        #: Shape-only rules: a finding of theirs that the findings of other rules
        #: cover (but for ``FALLBACK_SLACK`` bytes) is dropped — the rule that knows
        #: the token's format labels it, and its severity decides.
        self._fallback = frozenset(i for i, r in enumerate(self.rules) if r.kind in FALLBACK_KINDS)
        self._home: tuple[int, Compiled] | bool | None = None  # home_sweep's rule, lazily
        # Equal spans: identity kinds first (PLACEHOLDERS order), then table order.
        order = {k: i for i, k in enumerate(PLACEHOLDERS)}
        self._priority = [order.get(r.kind, len(order) + i) for i, r in enumerate(self.rules)]
        #: A match whose span equals one a rule of lower rank already accepted is not
        #: checked: ``_findings`` would keep that rule's finding and drop it. A shape
        #: rule ranks last (it yields to any other rule's equal span, and none yields
        #: to it), so its acceptance never spares another rule's check.
        self._rank = [_LAST if i in self._fallback else p for i, p in enumerate(self._priority)]
        # (a hit's rules in rank order: the one whose finding would be kept checks first)
        self._pf = Prefilter([tuple(k.encode("utf-8") for k in r.keywords) for r in self.rules], self._gated_pos,
                             self._rank)

    def home_sweep(self, data: bytes, tick: Callable[[], None] | None = None) -> list[Finding]:
        """The literal backstop of stage two: the caller's home, in its plain,
        ``\\/``-escaped and ``%2F`` spellings, standing as a path (the §3.7 anchors)
        anywhere in ``data``. Independent of the prefilter and the views; empty when
        the identity has no home."""
        if self._home is None:
            rules = [(i, c) for i, c in enumerate(self._comp) if c.rule.kind == HOME_SELF]
            self._home = rules[0] if rules else False
        if not self._home:
            return []
        ci, c = self._home
        home = self._ctx.home.lower()
        spellings = {home, home.replace(b"/", b"\\/"), home.replace(b"/", b"%2f")}
        if tick is not None:
            tick()
        out = []
        longest = max(len(lit) for lit in spellings)
        for offset, low, limit in lowered_windows(data, 0, len(data), longest - 1):
            for lit in spellings:
                p = low.find(lit)
                while p >= 0 and offset + p < limit:
                    pos = offset + p
                    s = pos - backslash_run(data, pos, max(0, pos - 64))
                    m = c.rx.match(data, s, pos + len(lit))
                    if m is not None and m.end() == pos + len(lit) and c.check(data, m, self._ctx):
                        out.append(Finding(m.start(), m.end(), c.rule.kind, c.rule.severity, c.rule.name))
                    p = low.find(lit, p + 1)
        return sorted(out, key=lambda f: f.start)

    def scan(self, data: bytes) -> list[Finding]:
        """Every finding in ``data``, sorted by start, contained duplicates dropped."""
        return self.find(data, None)

    def find(self, data: bytes, tick: Callable[[], None] | None) -> list[Finding]:
        """:meth:`scan` with ``tick`` called regularly (it raises to abort)."""
        marks: list[int] = []
        raw = self._scan_buffer(data, tick, marks)
        pem_ci = next((i for i, c in enumerate(self._comp) if c.is_pem), -1)
        for ls, le in view_ranges(data, marks):
            for view in views_for(data[ls:le], ls):
                if tick is not None:
                    tick()
                for vs, ve, ci, block in self._scan_buffer(view.text, tick, None):
                    rs, re_ = view.raw_span(vs, ve)
                    raw.append((rs, re_, ci, None))
                    if block is not None and pem_ci >= 0 and block[1] > block[0]:
                        # a body over the view's lines is one span of the raw line
                        bs, be = view.raw_span(block[0], block[1])
                        raw.append((bs, be, pem_ci, None))
        return self._findings(data, raw)

    def _findings(self, data: bytes, raw: list) -> list[Finding]:
        spans = []
        prio = self._priority
        for s, e, ci, block in raw:
            s, e = align_to_units(data, s, e)
            if e > s:
                spans.append((s, -e, prio[ci], ci, block))
        spans.sort(key=lambda h: h[:3])
        if self._fallback:
            spans = _yield_fallbacks(spans, self._fallback)
        out: list[Finding] = []
        max_end = -1
        for s, neg_e, _, ci, block in spans:
            if -neg_e <= max_end:
                continue  # inside a finding already kept: the same bytes, masked by it
            rule = self.rules[ci]
            out.append(Finding(s, -neg_e, rule.kind, rule.severity, rule.name, block))
            max_end = -neg_e
        return out

    def _scan_buffer(self, buf: bytes, tick, marks: list[int] | None) -> list:
        n = len(buf)
        # The gate, per line (``lines``: the lines where any gated rule matches);
        # the prefilter's hits carry only the rules the gate allows on their line.
        sbuf = spaced(buf)  # what the ruleset and the generic rules read: same offsets
        lines = self._gate.matching_by_line(sbuf, tick) if self._gate is not None else []
        if self._raw_gate is not None:
            lines = _merge_lines(lines, self._raw_gate.matching_by_line(buf, tick), self._raw_shift)
        if tick is not None:
            tick()
        hits = self._pf.hits(buf, lines)
        comp = self._comp
        done = [0] * len(comp)
        # where accepted spans end (a token glued to one starts a word) -> that span's
        # start and its rule's rank (an equal span of a higher rank is not checked)
        ends: dict[int, tuple[int, int]] = {}
        rank = self._rank
        later: list[tuple[int, int, int]] = []  # the catch-all rules' neighbourhoods, run last
        out: list = []
        ctx = self._ctx
        countdown = 0
        cov_s = cov_e = -1
        for e, s, owners in hits:
            if tick is not None:
                countdown -= 1
                if countdown < 0:
                    tick()
                    countdown = _TICK_EVERY
            for ci in owners:
                if ci == VIEW:
                    if marks is not None:
                        marks.append(s)
                    continue
                if s < done[ci]:
                    continue
                c = comp[ci]
                b = sbuf if c.spaced else buf
                if c.whole_line:
                    # The hit's neighbourhood of its line: PROVIDER_BACK before it, and
                    # PROVIDER_REACH after, widened to the next delimiter so a token is
                    # never cut (a match that still reaches the end is re-tried to the
                    # line's end by line_matches).
                    lo = s - PROVIDER_BACK if s > PROVIDER_BACK else 0
                    ls = buf.rfind(b"\n", lo, s) + 1 or lo
                    if ls < done[ci]:
                        ls = done[ci]
                    le = buf.find(b"\n", e, e + PROVIDER_REACH)
                    if le < 0:
                        le = delimiter_after(buf, min(n, e + PROVIDER_REACH), n)
                    done[ci] = le
                    if c.late:
                        later.append((ci, ls, le))
                    else:
                        line_matches(c, ci, b, ls, le, out, ends, ctx, rank[ci])
                    continue
                if c.literal and cov_s <= s and e <= cov_e and e - s < cov_e - cov_s:
                    continue  # a literal inside a longer span just found: that span masks it
                reach = c.reach
                if c.near_count and buf.count(c.near, s, s + reach) < c.near_count:
                    continue
                ws = s
                back = c.back
                if back:
                    lo = s - back if s > back else 0
                    ws = buf.rfind(b"\n", lo, s) + 1 or lo
                    if ws < done[ci]:
                        ws = done[ci]
                    if c.anchor:
                        # the run of anchor-class bytes that ends at the hit
                        aset = c.anchor_set
                        i = s
                        while i > ws and buf[i - 1] in aset:
                            i -= 1
                        ws = i
                        if ws < s and buf.find(b"\\", ws - 6 if ws > 6 else 0, ws) >= 0:
                            ws = after_escape(buf, ws, s)
                we = s + reach
                if we > n:
                    we = n
                if c.clip:  # an addition's regex may cross lines: keep it on this one
                    nl = buf.find(b"\n", s, we)
                    if nl >= 0:
                        we = nl
                m, span = try_hit(c, b, ws, s, we, n, ctx, ends, rank[ci])
                if m is None:
                    if span > done[ci]:
                        done[ci] = span  # hits inside a rejected run would retry the same run
                    continue
                done[ci] = m.end()
                ends[span[1]] = (span[0], rank[ci])
                cov_s, cov_e = span
                block = None
                if c.is_pem:
                    le = buf.find(b"\n", m.end())
                    block = consume_block(buf, m.start(), m.end(), le if le >= 0 else n)
                out.append((span[0], span[1], ci, block))
        for ci, ls, le in later:
            line_matches(comp[ci], ci, sbuf if comp[ci].spaced else buf, ls, le, out, ends, ctx, rank[ci])
        gated_pos = self._gated_pos
        for ci in self._every_line:
            if tick is not None:
                tick()
            pos = gated_pos.get(ci)
            b = sbuf if comp[ci].spaced else buf
            if pos is None:  # (``(?m)``: ``$`` holds at every line end)
                line_matches(comp[ci], ci, b, 0, n, out, ends, ctx, rank[ci])
                continue
            # Matches never cross a line and RE2 judges assertions on the whole
            # buffer, so searching the gate's lines finds what searching it all would.
            for ls, le, allowed in lines:
                if pos in allowed:
                    line_matches(comp[ci], ci, b, ls, le, out, ends, ctx, rank[ci])
        return out
