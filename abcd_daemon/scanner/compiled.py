"""A rule compiled for the engine: its regex, its check, and how it is searched.

Contract of :class:`Compiled` (built once per rule by ``engine.Scanner``):

- the regex is RE2 (``linear``: no input can make it backtrack) for every rule abcd did
  not write and test itself (:data:`LINEAR_SOURCES`), Python ``re`` for ours;
- ``spaced``: the rule reads the buffer's spaced copy (``spaced``: escaped whitespace
  read as whitespace) — the rules written in the ruleset's style do; our own judge
  escapes themselves;
- ``whole_line``: the rule is searched once per neighbourhood of its keyword hits
  (:data:`PROVIDER_BACK` before a hit, :data:`PROVIDER_REACH` after it, widened to a
  delimiter), not in a window per hit: every provider rule, every keyword-less
  generic rule (a shape, tried on every line the gate names) and every generic rule
  whose ``Rule.search`` is ``"neighbourhood"`` — which must fit that neighbourhood
  and need none of the per-hit tests, else compiling it raises ``ValueError``;
- ``refused_leads``: the leads (``Rule.refused_leads``) a keyword-less rule's check
  refuses, tested on a candidate's bounds before its groups are read;
- ``late``: a generic neighbourhood rule (a catch-all: secret-named assignments and
  flags) is searched after every other keyword rule, so a span a rule that ranks before
  it already took is not checked again (``engine``);
- the remaining fields are the rule's window and boundary facts, read per hit.

:class:`Finding` is the engine's output value.
"""

from __future__ import annotations

import dataclasses
import re

from .checks import CHECKS
from .linear import Linear, fast_linear
from .rules import PEM_KIND, Rule

#: Rules compiled with RE2 (linear time) rather than ``re``: the ones abcd did not
#: write and test itself.
LINEAR_SOURCES = frozenset({"provider", "addition", "generic"})
#: Rules behind the Vectorscan gate: the fixed ones (an addition changes per config).
GATED_SOURCES = frozenset({"provider", "generic"})
#: A provider rule is searched from this many bytes before its keyword hit …
PROVIDER_BACK = 256
#: … to this many after it (then to the next delimiter, at most ``matching._DELIM_SEARCH`` on).
PROVIDER_REACH = 1024


@dataclasses.dataclass(frozen=True)
class Finding:
    """A span ``[start, end)`` of the scanned bytes, whole escape units.

    ``block`` is set on a PEM header whose body runs over the following lines:
    ``(start, end, nlines)`` of the lines the mask replaces with one placeholder."""

    start: int
    end: int
    kind: str
    severity: str
    rule: str = ""
    block: tuple[int, int, int] | None = None


class Compiled:
    """One rule as the engine runs it (see the module contract)."""

    __slots__ = ("rule", "rx", "check", "back", "reach", "anchor", "anchor_set", "word", "match_only", "is_pem",
                 "near", "near_count", "clip", "literal", "whole_line", "late", "groups", "linear", "spaced",
                 "refused_leads")

    def __init__(self, rule: Rule) -> None:
        flags = re.IGNORECASE if rule.ignorecase else 0
        self.rule = rule
        if rule.source in LINEAR_SOURCES:
            self.rx = fast_linear(rule.regex, rule.ignorecase)
        else:
            self.rx = re.compile(rule.regex.encode("utf-8"), flags)
        self.groups = self.rx.groups
        self.linear = isinstance(self.rx, Linear)  # searched with a cheap start test
        # Rules abcd did not write read the buffer's ``spaced`` copy (escaped
        # whitespace read as whitespace); abcd's own rules judge escapes themselves.
        self.spaced = rule.source in LINEAR_SOURCES
        # A provider rule is searched over the whole line of its hit, once per line:
        # its pattern, not a window, decides where the secret starts.
        # (Also a generic rule with no keyword: it is a shape, tried on every line.)
        neighbourhood = _neighbourhood_searched(rule)  # (raises for a rule that cannot be)
        self.whole_line = rule.source == "provider" or (rule.source == "generic" and not rule.keywords) \
            or neighbourhood
        # The catch-all generic rules searched by neighbourhood (secret-named
        # assignments and flags) run after every other rule's hits: where a specific
        # rule that ranks before them took the very span, their check is skipped.
        self.late = neighbourhood and rule.source == "generic"
        if (rule.refused_leads or rule.shortest) and not rule.longest:
            raise ValueError(f"rule {rule.name!r}: refused_leads and shortest need longest")
        self.refused_leads = rule.refused_leads or None
        self.check = CHECKS[rule.check] if rule.check else None
        self.back = rule.back
        self.reach = rule.reach
        # anchor: the byte class of the run a match starts at (see rules docstring)
        self.anchor = bool(rule.anchor)
        self.anchor_set: frozenset[int] = frozenset()
        if rule.anchor:
            cls = re.compile(b"[" + rule.anchor.encode("utf-8") + b"]")
            self.anchor_set = frozenset(i for i in range(256) if cls.fullmatch(bytes([i])))
        self.word = rule.boundary == "word"
        self.match_only = not rule.back and not rule.anchor
        self.is_pem = rule.kind == PEM_KIND
        self.near = rule.near.encode("utf-8")
        self.near_count = rule.near_count
        # Bundled regexes never match a newline (tested); an addition's might.
        self.clip = rule.source == "addition"
        # Identity literals: the match is the keyword itself (or inside it).
        self.literal = rule.source in ("identity.emails", "identity.names", "identity.github", "identity.user")


def _neighbourhood_searched(rule: Rule) -> bool:
    """A keyworded rule searched like a provider rule, once per neighbourhood of its
    hits (``Rule.search``): its windows must fit the neighbourhood (``back`` ≤
    PROVIDER_BACK, ``reach`` ≤ PROVIDER_REACH) and it must need none of the per-hit
    tests (word boundary, anchor, ``near``)."""
    if rule.search != "neighbourhood":
        return False
    if not (rule.keywords and rule.back <= PROVIDER_BACK and rule.reach <= PROVIDER_REACH
            and not rule.boundary and not rule.anchor and not rule.near_count):
        raise ValueError(f"rule {rule.name!r} cannot be searched by neighbourhood")
    return True
