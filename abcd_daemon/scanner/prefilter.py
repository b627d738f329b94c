"""The Aho-Corasick keyword prefilter: one pass that says where each rule may match.

Keywords are lower-case byte literals searched (overlapping) on a lower-cased copy
of the text, so a rule's regex decides case itself. Besides rule keywords the
automaton carries *view triggers*: the bytes that say a line needs a decoded view
(a printable-ASCII ``\\u00XX`` escape, an escaped solidus, a ``%XX``, a PEM marker
behind escapes).
"""

from __future__ import annotations

from collections.abc import Sequence

import ahocorasick_rs

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
)


class Prefilter:
    """``find(low)`` returns ``(owners, start, end)`` triples in text order, where
    ``owners`` is a tuple of rule indices (``VIEW`` marks a view trigger)."""

    __slots__ = ("_ac", "_owners")

    def __init__(self, keywords_per_rule: Sequence[Sequence[bytes]]) -> None:
        owners: dict[bytes, list[int]] = {}
        for idx, keywords in enumerate(keywords_per_rule):
            for kw in keywords:
                owners.setdefault(kw.lower(), []).append(idx)
        for kw in VIEW_TRIGGERS:
            owners.setdefault(kw, []).append(VIEW)
        patterns = list(owners)
        self._owners = [tuple(dict.fromkeys(owners[p])) for p in patterns]
        self._ac = ahocorasick_rs.BytesAhoCorasick(patterns, implementation=ahocorasick_rs.Implementation.DFA)

    def find(self, low: bytes) -> list[tuple[int, int, int]]:
        """Overlapping hits ``(pattern_index, start, end)`` on the lower-cased text."""
        return self._ac.find_matches_as_indexes(low, overlapping=True)

    @property
    def owner_table(self) -> list[tuple[int, ...]]:
        return self._owners
