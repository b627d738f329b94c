"""A secret found once is masked wherever else it is spelled the same.

Rules judge a value by its context: ``GH_TOKEN=<value>`` in a ``.env`` read names it,
but the same value pasted bare into a later command (``gh auth login --with-token
<value>``), echoed by a tool, or quoted again after ``|`` has no name beside it, and
may not read as a token by shape. Once the transcript has shown what the value is,
every other occurrence is the same secret.

Contract of :func:`with_repeats`:

- the values are the masked spans of the secret findings given — not identity,
  home or network kinds (their literal rules already match every occurrence), not a
  PEM block, not a token judged by its shape alone (:data:`SHAPE_KINDS`: the same
  shape judges it wherever it stands, and a guess must not spread to the ids that
  share its bytes) — of :data:`MIN_VALUE` to :data:`MAX_VALUE` bytes and one line;
- every other byte-identical occurrence anywhere in the text (any line: a value
  read on one line and used on another) becomes a finding of the same kind and
  severity, its rule named ``<rule>/repeat``; occurrences overlapping a finding
  already made are left to it;
- the result is sorted by start, like the engine's;
- a transcript redacted in batches (capture streams it) carries its values forward:
  a value named in one batch is masked in every later batch; an occurrence in an
  earlier batch, already written, is masked only if a rule finds it there.

Why stage two still needs only the changed lines: every round searches the whole
text for the values it found, so a line no round changed holds no occurrence of
any value found (``pipeline``). One literal pass per round (``literal_scan``); pure.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools

from .compiled import Finding
from .engine import FALLBACK_KINDS
from .escapes import align_to_units
from .literal_scan import LiteralSet
from .rules import IDENTITY_KINDS, PEM_KIND

#: Shorter values are not searched for: a short one may be a word used elsewhere.
MIN_VALUE = 10
#: Longer ones neither: a value that long is a blob (Vectorscan refuses a literal of
#: 200 KB, and the set would fall back to the slower automaton).
MAX_VALUE = 8192
SUFFIX = "/repeat"
#: Values searched for per call at most, carried ones first: compiling the set costs
#: about 30 µs a value (0.12 s for 4,096, 0.95 s for 20,000), and a batch dense with
#: distinct secrets must not stall on it. A transcript with more still has each value
#: masked wherever a rule finds it.
MAX_VALUES = 2048
#: Kinds of the rules that judge a token by its shape, with no name or provider beside it.
SHAPE_KINDS = FALLBACK_KINDS | {"token:prefixed"}
_SKIP = IDENTITY_KINDS | SHAPE_KINDS | {PEM_KIND}


def with_repeats(text: bytes, findings: list[Finding], carried: dict[bytes, Finding] | None = None,
                 *, search_carried: bool = True) -> list[Finding]:
    """``findings`` plus the other occurrences in ``text`` of their values (see the
    module contract), sorted by start. ``carried`` (values found in earlier batches of
    the same transcript, value → the finding that named it) is searched for too, and
    this call's values are added to it (:data:`MAX_VALUES` in all): a transcript
    streamed in batches masks a value named in one batch in every later one.
    ``search_carried=False``: the carried values were already searched over this text
    (an earlier round of the same batch masked every occurrence, and masking makes no
    new one), so only this call's are; they are still added."""
    values: dict[bytes, Finding] = dict(carried) if carried and search_carried else {}
    for f in findings:
        if len(values) >= MAX_VALUES:
            break
        if f.kind in _SKIP or f.block is not None or not MIN_VALUE <= f.end - f.start <= MAX_VALUE:
            continue
        value = text[f.start:f.end]
        if b"\n" not in value and (carried is None or len(carried) < MAX_VALUES or value in carried):
            values.setdefault(value, f)
            if carried is not None:
                carried.setdefault(value, f)
    if not values:
        return findings
    patterns = list(values)
    taken = sorted((f.start, f.end) for f in findings)
    starts = [a for a, _ in taken]
    reach = list(itertools.accumulate((b for _, b in taken), max))  # furthest end so far
    extra: list[Finding] = []
    last = -1
    for s, neg_e, k in LiteralSet(patterns).find(text):
        e = -neg_e
        if s < last:
            continue  # inside the occurrence just taken (the longest value at a start wins)
        i = bisect.bisect_left(starts, e)  # the findings that start before this occurrence ends
        if i and reach[i - 1] > s:
            continue
        last = e
        s, e = align_to_units(text, s, e)  # whole escape units, as the engine's spans
        f = values[patterns[k]]
        rule = f.rule if f.rule.endswith(SUFFIX) else f.rule + SUFFIX
        extra.append(dataclasses.replace(f, start=s, end=e, rule=rule))
    if not extra:
        return findings
    return sorted(findings + extra, key=lambda f: (f.start, -f.end))
