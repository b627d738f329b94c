"""The Aho-Corasick keyword prefilter: where each rule may match, in text order.

Keywords are lower-case byte literals searched (overlapping) on the text
lower-cased a window at a time (``windows``), so a rule's regex decides case itself. Besides rule keywords the
automaton carries *view triggers*: the bytes that say a line needs a decoded view
(a printable-ASCII ``\\u00XX`` escape, an escaped solidus, a ``%XX``, a PEM marker
behind escapes).

Two automata, so that keywords present everywhere (``key``, ``token``, ``secret``)
cost nothing on the lines where none of their rules can match:

- the *always* automaton holds every keyword with at least one owner that is not
  gated (a view trigger, an identity literal, an addition, a rule the gate could
  not take), and runs over the whole buffer;
- the *gated* automaton holds the keywords all of whose owners are gated rules
  (``gate``), and runs only over the lines where the gate says one of those rules
  matches.

:meth:`Prefilter.hits` returns ``(end, start, owners)`` for every keyword hit, in
the order one automaton over the whole buffer would give (by end, then start:
overlapping hits of a DFA), with ``owners`` cut to the rules the gate allows on the
hit's line (an ungated owner is always kept). A hit left with no owner is dropped.
So the engine sees exactly the (hit, rule) pairs an ungated scan would try, minus
those of a rule the gate proves has no match on the line.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Sequence

import ahocorasick_rs

from .forms import VIEW_TRIGGERS as FORM_TRIGGERS
from .windows import lowered_windows

#: Owner id of a view trigger in a keyword's owner list.
VIEW = -1
#: A printable-ASCII JSON escape (\u0020-\u007f), an escaped '/', a percent escape of
#: printable ASCII (checked for its second hex digit by the engine), a PEM marker, a
#: twice-escaped quote.
VIEW_TRIGGERS: tuple[bytes, ...] = (
    tuple(b"\\u00" + bytes([c]) for c in b"234567")
    + (b"\\/",)
    + tuple(b"%" + bytes([c]) for c in b"234567")
    + (b"-----begin", b"---- begin", b"\\u002d")
    # A quote escaped twice: JSON serialised inside a JSON string, whose secrets
    # are followed by \\\" — one decoded layer shows them as a rule expects.
    + (b'\\\\\\"',)
    # The words for "password" in other languages, \u-escaped (``forms``).
    + FORM_TRIGGERS
)

#: Keyword automata kept at most, one per distinct set of keywords a gate line needs
#: (a scanner sees few: the rules of a line share their keywords).
_MAX_SETS = 256
#: Owner lists kept at most, one per distinct set of rules a gate line allows (each
#: a few tuples: cheap to keep many, and a transcript's lines make hundreds).
_MAX_OWNER_SETS = 8192
#: A gate line: ``(line_start, line_end, allowed gate positions)``.
GateLine = tuple[int, int, frozenset[int]]


def _automaton(patterns: list[bytes]):
    if not patterns:
        return None
    return ahocorasick_rs.BytesAhoCorasick(patterns, implementation=ahocorasick_rs.Implementation.DFA)


class Prefilter:
    """Keyword automata for ``keywords_per_rule``; ``gated`` maps a gated rule's
    index to its position in the gate (see the module contract); a hit's owners are
    in ``rank`` order (a rule's rank by its index; default: the index itself)."""

    __slots__ = ("_always", "_always_owners", "_always_mixed", "_gated", "_gated_words", "_gated_owners",
                 "_gate_pos", "_keyworded", "_by_set", "_by_words", "_words_at", "_overlap")

    def __init__(self, keywords_per_rule: Sequence[Sequence[bytes]], gated: dict[int, int] | None = None,
                 rank: Sequence[int] | None = None) -> None:
        gated = gated or {}
        owners: dict[bytes, list[int]] = {}
        for idx, keywords in enumerate(keywords_per_rule):
            for kw in keywords:
                owners.setdefault(kw.lower(), []).append(idx)
        if rank is not None:
            for who in owners.values():
                who.sort(key=rank.__getitem__)
        for kw in VIEW_TRIGGERS:
            owners.setdefault(kw, []).append(VIEW)
        #: a window must also hold a keyword starting at its last byte
        self._overlap = max((len(kw) for kw in owners), default=1) - 1
        always: list[bytes] = []
        by_gate: list[bytes] = []
        for kw, who in owners.items():
            (by_gate if all(ci in gated for ci in who) else always).append(kw)
        self._always = _automaton(always)
        self._always_owners = [tuple(dict.fromkeys(owners[p])) for p in always]
        #: per always keyword: does any owner need the gate's word on the line?
        self._always_mixed = [any(ci in gated for ci in o) for o in self._always_owners]
        self._gated = _automaton(by_gate)
        self._gated_words = by_gate
        self._gated_owners = [tuple(dict.fromkeys(owners[p])) for p in by_gate]
        self._by_set: dict[frozenset[int], tuple] = {}
        self._by_words: dict[tuple[int, ...], object] = {}
        self._gate_pos = dict(gated)
        #: gate positions of the rules with a keyword in the gated automaton
        self._keyworded = frozenset(gated[ci] for o in self._gated_owners for ci in o)
        #: gate position -> the gated keywords (indices) its rule owns
        words_at: dict[int, list[int]] = {}
        for wi, who in enumerate(self._gated_owners):
            for ci in who:
                words_at.setdefault(gated[ci], []).append(wi)
        self._words_at = words_at

    def find(self, buf: bytes) -> list[tuple[int, int, tuple[int, ...]]]:
        """Every hit ``(end, start, owners)`` in ``buf``, ungated (both automata over
        the whole text, every owner kept), in hit order."""
        everything = [(0, len(buf), frozenset(self._gate_pos.values()))]
        return self.hits(buf, everything)

    def hits(self, buf: bytes, lines: Sequence[GateLine]) -> list[tuple[int, int, tuple[int, ...]]]:
        """The hits in ``buf`` given the gate's ``lines`` (the lines where any gated
        rule matches, in order; see the module contract). The text is lower-cased a
        window at a time (``windows``), so a long line costs a window, not a copy."""
        out: list[tuple[int, int, tuple[int, ...]]] = []
        overlap = self._overlap
        if self._always is not None:
            owners = self._always_owners
            mixed = self._always_mixed
            starts = None
            pieces = 0
            for offset, low, limit in lowered_windows(buf, 0, len(buf), overlap):
                pieces += 1
                for k, s, e in self._always.find_matches_as_indexes(low, overlapping=True):
                    s += offset
                    if s >= limit:
                        continue  # the next window's
                    who = owners[k]
                    if mixed[k]:
                        if starts is None:
                            starts = [ln[0] for ln in lines]
                        who = self._allowed(who, _line_at(lines, starts, s))
                        if not who:
                            continue
                    out.append((e + offset, s, who))
            if pieces > 1:
                out.sort(key=_order)  # hits near a window's end interleave with the next's
        if self._gated is not None and lines:
            gated_hits: list[tuple[int, int, tuple[int, ...]]] = []
            keyworded = self._keyworded
            split = False
            for ls, le, allowed in lines:
                here = keyworded & allowed
                if not here:
                    continue
                ac, owners = self._for(here)
                for offset, low, limit in lowered_windows(buf, ls, le, overlap):
                    split = split or limit < le
                    for k, s, e in ac.find_matches_as_indexes(low, overlapping=True):
                        if s + offset < limit:
                            gated_hits.append((e + offset, s + offset, owners[k]))
            if split:
                gated_hits.sort(key=_order)
            if gated_hits:
                out = gated_hits if not out else sorted(out + gated_hits, key=_order)
        return out

    def _for(self, allowed: frozenset[int]):
        """The automaton of the gated keywords owned by a rule at a position in
        ``allowed``, each with those owners only (cached per set; the automaton,
        the costly part, per set of keywords, which many sets share)."""
        got = self._by_set.get(allowed)
        if got is None:
            pos = self._gate_pos
            # (every word here has an owner at a position in ``allowed``: its owners' list is never empty)
            words = tuple(sorted({wi for j in allowed for wi in self._words_at.get(j, ())}))
            owners = [tuple(ci for ci in self._gated_owners[wi] if pos[ci] in allowed) for wi in words]
            ac = self._by_words.get(words)
            if ac is None:
                ac = _automaton([self._gated_words[wi] for wi in words])
                if len(self._by_words) >= _MAX_SETS:
                    self._by_words.clear()
                self._by_words[words] = ac
            got = (ac, owners)
            if len(self._by_set) >= _MAX_OWNER_SETS:
                self._by_set.clear()
            self._by_set[allowed] = got
        return got

    def _allowed(self, who: tuple[int, ...], allowed: Collection[int]) -> tuple[int, ...]:
        pos = self._gate_pos
        return tuple(ci for ci in who if ci not in pos or pos[ci] in allowed)


def _order(hit: tuple[int, int, tuple[int, ...]]) -> tuple[int, int]:
    return hit[0], hit[1]


def _line_at(lines: Sequence[GateLine], starts: list[int], pos: int) -> frozenset[int]:
    """The allowed set of the gate line holding ``pos`` (empty when none does)."""
    i = bisect.bisect_right(starts, pos) - 1
    if i >= 0 and pos < lines[i][1] + 1:
        return lines[i][2]
    return frozenset()
