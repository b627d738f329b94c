"""Required literals of a regex: the keywords that let the prefilter skip a rule.

:func:`required_literals` returns a set of lower-case strings such that EVERY match
of the pattern (in any letter case) contains at least one of them, or ``None`` when
no such set of useful literals can be proven. The prefilter searches a lower-cased
copy of the text for them, so a rule with literals only runs where one occurs; a
rule with ``None`` runs on every line (correct, only slower). Soundness is what
matters — a literal that is not required would hide a match — so every rule below
errs towards ``None``:

- a literal character, or a character class whose members all fold to at most
  ``_CLASS_MAX`` lower-case characters, extends the current run of exact strings;
- a group is exact when its whole body is; an alternation is exact when every branch
  is, and otherwise requires the union of its branches' requirements (none if any
  branch has none);
- a repeat ``{n,m}`` with ``n == m`` of an exact body is exact (bounded growth); one
  with ``n >= 1`` requires what its body requires; ``n == 0`` requires nothing;
- zero-width assertions (``\\b``, ``^``, ``$``) are transparent; anything else ends
  the run.
Of the candidates found in a sequence the one with the longest shortest literal is
kept; literals shorter than ``MIN_LITERAL`` are not worth a prefilter entry.

Patterns are parsed with Python's own regex parser after the RE2-only spellings the
rulesets use are normalised (a mid-pattern ``(?i)``, ``\\z``) — case is irrelevant
here because matching is decided on lower-cased text.
"""

from __future__ import annotations

import re
import warnings
from re import _constants as C  # the parser's node types (stable across 3.11+)
from re import _parser as P

MIN_LITERAL = 2
_CAP = 64  # the most strings a run of exact alternatives may multiply into
_CLASS_MAX = 4
_INLINE_I = re.compile(r"\(\?i\)")


def required_literals(pattern: str) -> frozenset[str] | None:
    """The literals every match contains one of (lower-case), or ``None``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = P.parse(_normalise(pattern))
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    try:
        exact, required = _analyse(list(tree))
    except RecursionError:
        return None
    found = exact if exact is not None else required
    if not found or min(map(len, found)) < MIN_LITERAL:
        return None
    return frozenset(found)


def _normalise(pattern: str) -> str:
    return _INLINE_I.sub("", pattern).replace("\\z", "\\Z")


def _chars(op, av) -> set[str] | None:
    # Only ASCII folds the same way here and in ``bytes.lower`` (the haystack's).
    if op is C.LITERAL:
        return {chr(av).lower()} if av < 128 else None
    if op is not C.IN:
        return None
    out: set[str] = set()
    for o, a in av:
        if o is C.LITERAL and a < 128:
            out.add(chr(a).lower())
        elif o is C.RANGE and a[1] - a[0] < _CLASS_MAX and a[1] < 128:
            out |= {chr(x).lower() for x in range(a[0], a[1] + 1)}
        else:
            return None  # NEGATE, CATEGORY, wide ranges
    return out if len(out) <= _CLASS_MAX else None


def _analyse(seq) -> tuple[set[str] | None, set[str] | None]:
    """``(exact, required)`` of a node sequence: ``exact`` is the set of strings the
    whole sequence can match (or None); ``required`` the best required set (or None)."""
    candidates: list[set[str]] = []
    run: set[str] = {""}
    whole_exact = True

    def flush() -> None:
        nonlocal run
        if run != {""}:
            candidates.append(run)
        run = {""}

    for op, av in seq:
        if op is C.AT:
            continue
        exact = _chars(op, av)
        required = None
        if exact is None:
            exact, required = _node(op, av)
        if exact is not None:
            grown = {a + b for a in run for b in exact}
            if len(grown) > _CAP:
                flush()
                grown = set(exact)
            run = grown
            continue
        whole_exact = False
        flush()
        if required:
            candidates.append(required)
    flush()
    exact_all = None
    if whole_exact:
        exact_all = candidates[0] if len(candidates) == 1 else ({""} if not candidates else None)
    return exact_all, _best(candidates)


def _node(op, av) -> tuple[set[str] | None, set[str] | None]:
    if op is C.SUBPATTERN:
        return _analyse(list(av[-1]))
    if op is C.BRANCH:
        results = [_analyse(list(b)) for b in av[1]]
        exact = None
        if all(e is not None for e, _ in results):
            exact = set().union(*(e for e, _ in results))
            if "" in exact:
                return None, None  # an empty branch: nothing is required
        needs = [e if e is not None else r for e, r in results]
        if any(not n or "" in n for n in needs):
            return exact, None
        return exact, set().union(*needs)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", C.MAX_REPEAT)):
        lo, hi, body = av
        e, r = _analyse(list(body))
        if e is not None and lo == hi and lo <= 8 and len(e) ** lo <= _CAP:
            out = {""}
            for _ in range(lo):
                out = {a + b for a in out for b in e}
            return out, None
        if lo >= 1:
            need = e if e is not None and "" not in e else r
            return None, need
    return None, None


def _best(candidates: list[set[str]]) -> set[str] | None:
    best = None
    for c in candidates:
        if not c or "" in c:
            continue
        if best is None or (min(map(len, c)), -len(c)) > (min(map(len, best)), -len(best)):
            best = c
    return best
