"""The two-stage redaction pass: sanitise (with the home fold) → JSON guard → verify.

0. Home pre-fold (round 0): the caller's home in the spellings the stage-two
   backstop knows (``Scanner.home_sweep``: plain, ``\\/``-escaped, ``%2F``; the
   same rule and check as in the scan) is masked first, through the same mask and
   JSON guard. Nearly every line of a transcript holds the home (its ``cwd``), so
   without this pass 1 would change nearly every line and stage two would rescan
   all of them.
1. Sanitise: stage-one findings (every rule, raw bytes and decoded views) are
   masked (``mask``); a finding the mask left outside every edit refuses. The
   caller's home is a finding like any other (``home_path_self``), folded to ``~``
   in every spelling the rule knows: plain, ``\\/``-escaped (1, 3, 7 backslashes),
   ``%2F``/``%252F``, behind ``file://``, and through the views.
   A secret finding's value is then masked wherever else in the text it is spelled
   the same (``repeats``: a value named on one line and used bare on another).
2. JSON guard: every changed line that was a JSON document before must be one
   after, with the same structure (a span over a structural quote counts as
   breaking it); such a line is re-masked by whole string values
   (``mask.fallback_line``); one that still cannot be kept valid is refused
   (``json_integrity``).
3. Verify (stage two): the changed lines are re-scanned. Masking can change a
   neighbour's context (a token glued to a masked one gains a boundary), so a
   rescan that finds something masks it and looks again, up to
   ``SANITISE_ROUNDS`` (not converging by then refuses); the last rescan must
   hold no *blocking* finding — severity hard_fail, or any identity/network
   kind. Independently, the whole
   output is swept for the caller's home standing as a path (the literal
   backstop). Anything left refuses the whole text (``RedactionResidual``).

Why rescanning only the changed lines is enough: the engine is line-local (see
``engine``): findings on a line depend only on that line. Pass 1 scans the whole
folded text, so a line no round from pass 1 on changed is, byte for byte, a line
pass 1 scanned and found nothing on — whether round 0 changed it or not (a line
changed only by round 0 was scanned in pass 1 in its folded form, which is its
output form) — and a rescan of it would find none. The repeats are no exception:
each round searches the whole text for the values it found, so a line holding one
is a changed line. This is tested
(``test_rescanning_changed_lines_equals_rescanning_everything`` and the generated
text property tests).

Refusals carry kinds and positions only, never the matched bytes.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import time
from collections import Counter
from collections.abc import Callable

from ..errors import DegradedScanner, RedactionResidual, ScanDeadline
from .engine import Finding, Scanner
from ..gcpause import paused
from .jsonline import is_json
from .mask import fallback_line, mask
from .repeats import with_repeats
from .rules import HARD, HOME_KINDS, IDENTITY_KINDS

JSON_INTEGRITY = "json_integrity"
#: Sanitise passes at most: the first over everything, the next ones over the lines
#: the previous pass changed (masking can change a neighbour's context: glued
#: text cascades); the last rescan is stage two's. Past it, a residual refuses.
SANITISE_ROUNDS = 8
_PLACEHOLDER = re.compile(rb"\[redacted-[a-z]+(?:-[a-z]+)*(?:: \d+ lines)?\]")


@dataclasses.dataclass(frozen=True)
class Redaction:
    """The redacted bytes and what was redacted. ``home_paths`` counts
    home_path_self/home_path_other findings, ``secrets`` every other one.
    ``findings`` is ``(rule, kind, line)`` per finding (1-based line of the text
    the round scanned: the input for the first round), never the bytes."""

    text: bytes
    secrets: int
    home_paths: int
    kinds: dict[str, int]
    findings: tuple[tuple[str, str, int], ...] = ()


def redact_text(
    scanner: Scanner,
    text: bytes,
    *,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    carried: dict | None = None,
) -> Redaction:
    """Redact ``text`` (any bytes) with ``scanner``.

    ``deadline`` is an absolute ``clock()`` value (e.g. ``time.monotonic() +
    config.scan_deadline(len(text))``); it is checked before each stage and
    regularly inside them. Raises :class:`DegradedScanner` if the scanner is
    degraded, :class:`ScanDeadline` past the deadline, :class:`RedactionResidual`
    when stage two finds a blocking residual or a JSON line cannot stay JSON.
    Never returns partly redacted text. Python's cyclic collector is paused
    meanwhile (:mod:`~abcd_daemon.gcpause`). ``carried``: the secret values earlier
    batches of the same transcript found, searched for here and added to
    (``repeats.with_repeats``); pass one dict for all of a transcript's batches."""
    with paused():
        return _redact_text(scanner, text, deadline, clock, carried)


def _redact_text(scanner: Scanner, text: bytes, deadline: float | None,
                 clock: Callable[[], float], carried: dict | None = None) -> Redaction:
    if scanner.degraded:
        raise DegradedScanner(
            f"refusing to redact with a degraded scanner: {scanner.degraded}",
            hint="fix or remove the [[scanner.rules]] entry in config.toml",
        )
    tick = _ticker(deadline, clock)
    if tick is not None:
        tick()
    # Round 0: the caller's home folded first (the sweep's spellings), so that pass 1
    # scans folded text and stage two rescans only the lines pass 1 changed.
    homes0 = scanner.home_sweep(text, tick)
    folded = text
    if homes0:
        masked = _mask_all(text, homes0)
        folded, _ = _json_guard(text, masked.text, masked.edits, homes0)
    if tick is not None:
        tick()
    findings = with_repeats(folded, scanner.find(folded, tick), carried)
    masked = _mask_all(folded, findings)
    out, changed = _json_guard(folded, masked.text, masked.edits, findings)
    found = homes0 + findings
    where = _located(text, homes0) + _located(folded, findings)
    del folded, masked  # (a long line's folded copy is not kept through the rescans)
    for round_ in range(1, SANITISE_ROUNDS + 1):
        if tick is not None:
            tick()
        again = rescan(scanner, out, changed, tick)
        if not again:
            break
        # (the whole text: a value may recur on any line; the carried ones pass 1 searched)
        again = with_repeats(out, again, carried, search_carried=False)
        if round_ == SANITISE_ROUNDS:
            # did not converge: refuse, whatever the leftovers' severity
            raise residual(out, again)
        # Masking can make a new match (a token glued to the one before it gains a
        # boundary once that one is starred): mask it too, and look again.
        where += _located(out, again)
        masked = _mask_all(out, again)
        out, changed = _json_guard(out, masked.text, masked.edits, again)
        found += again
    verify(scanner, out, changed, tick, again)
    kinds = Counter(f.kind for f in found)
    homes = sum(n for k, n in kinds.items() if k in HOME_KINDS)
    return Redaction(text=out, secrets=len(found) - homes, home_paths=homes, kinds=dict(kinds),
                     findings=tuple(where))


def _line_of(text: bytes, offsets: list[int]) -> list[int]:
    """1-based line numbers of sorted-or-not ``offsets`` in ``text``."""
    starts = [0]
    pos = text.find(b"\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find(b"\n", pos + 1)
    return [bisect.bisect_right(starts, o) for o in offsets]


def _located(text: bytes, findings: list[Finding]) -> list[tuple[str, str, int]]:
    lines = _line_of(text, [f.start for f in findings])
    return [(f.rule, f.kind, line) for f, line in zip(findings, lines)]


def residual(text: bytes, findings: list[Finding]) -> RedactionResidual:
    """The refusal for ``findings`` left in ``text``: kinds, lines and rules only."""
    return RedactionResidual([f.kind for f in findings], [(f.start, f.end) for f in findings],
                             lines=_line_of(text, [f.start for f in findings]), rules=[f.rule for f in findings])


def _mask_all(data: bytes, findings: list[Finding]):
    """Mask, and refuse if any finding is left outside every edit (a masking fault
    must not pass as a clean line: stage two rescans changed lines only)."""
    masked = mask(data, findings)
    edits = masked.edits
    i = 0
    missing = []
    for f in findings:
        while i < len(edits) and edits[i][1] < f.end and edits[i][1] <= f.start:
            i += 1
        if not (i < len(edits) and edits[i][0] <= f.start and f.end <= edits[i][1]):
            missing.append(f)
    if missing:
        raise residual(data, missing)
    return masked


def _ticker(deadline: float | None, clock: Callable[[], float]) -> Callable[[], None] | None:
    if deadline is None:
        return None

    def tick() -> None:
        if clock() > deadline:
            raise ScanDeadline(
                "scanning this transcript passed its deadline; refused rather than stored half-checked",
                hint="it stays staged and is retried on a later drain",
            )

    return tick


def blocking(f: Finding) -> bool:
    """Reference §3.3: hard_fail, or any identity/network kind whatever its severity."""
    return f.severity == HARD or f.kind in IDENTITY_KINDS


def rescan(scanner: Scanner, out: bytes, changed: list[tuple[int, int]], tick=None) -> list[Finding]:
    """Every finding on the ``changed`` line spans of ``out`` (in ``out``'s offsets),
    except those inside a placeholder abcd wrote."""
    if 2 * sum(b - a for a, b in changed) >= len(out):
        # Most of the text changed (a long line alone, always): scan ``out`` itself
        # rather than a joined copy. The same findings: a line that did not change
        # was found clean by the scan before, and the scan is line-local.
        changed = [(0, len(out))]
        joined = out
    else:
        joined = b"\n".join(out[a:b] for a, b in changed)
    starts = []
    pos = 0
    for a, b in changed:
        starts.append(pos)
        pos += b - a + 1
    placeholders = [m.span() for m in _PLACEHOLDER.finditer(joined)]
    found: list[Finding] = []
    for f in scanner.find(joined, tick):
        if _inside(placeholders, f.start, f.end):
            continue
        i = bisect.bisect_right(starts, f.start) - 1
        base = changed[i][0] - starts[i]
        block = None if f.block is None else (f.block[0] + base, f.block[1] + base, f.block[2])
        found.append(dataclasses.replace(f, start=f.start + base, end=f.end + base, block=block))
    return found


def verify(scanner: Scanner, out: bytes, changed: list[tuple[int, int]], tick=None,
           rescanned: list[Finding] | None = None) -> None:
    """Stage two: the blocking findings on the ``changed`` lines of ``out`` (or of
    ``rescanned``, a rescan already made of them) plus the whole-text home backstop.
    Raises :class:`RedactionResidual` naming kinds and positions, never bytes."""
    if rescanned is None:
        rescanned = rescan(scanner, out, changed, tick)
    left = [f for f in rescanned if blocking(f)] + scanner.home_sweep(out, tick)
    if left:
        raise residual(out, sorted(left, key=lambda f: f.start))


def _inside(spans: list[tuple[int, int]], s: int, e: int) -> bool:
    i = bisect.bisect_right(spans, (s, 1 << 62)) - 1
    return i >= 0 and spans[i][0] <= s and e <= spans[i][1]


def _json_guard(
    data: bytes, out: bytes, edits: list[tuple[int, int, int, int]], findings: list[Finding]
) -> tuple[bytes, list[tuple[int, int]]]:
    """Check every changed line; return the (possibly re-masked) output and the
    output spans of the changed lines."""
    groups = _line_groups(data, edits)
    data_view, out_view = memoryview(data), memoryview(out)
    changed: list[tuple[int, int]] = []
    repairs: list[tuple[int, int, bytes]] = []
    fi = 0
    for in_ls, in_le, out_ls, out_le in groups:
        changed.append((out_ls, out_le))
        while fi < len(findings) and findings[fi].end <= in_ls:
            fi += 1
        spans = []
        j = fi
        while j < len(findings) and findings[j].start < in_le:
            f = findings[j]
            spans.append((max(f.start, in_ls) - in_ls, min(f.end, in_le) - in_ls))
            j += 1
        # A span over a structural quote would change the line's shape even where
        # the result still parses; a line that no longer parses is broken. (The
        # lines are checked through views: a line may be hundreds of MiB.)
        structural = any(_unescaped_quote(data, in_ls + a, in_ls + b, in_ls) for a, b in spans)
        if not structural and is_json(out_view[out_ls:out_le]):
            continue
        if not is_json(data_view[in_ls:in_le]):
            continue  # not a JSON line before: no JSON contract to keep
        fixed = fallback_line(data[in_ls:in_le], spans)
        if fixed is None or not is_json(fixed):
            raise RedactionResidual([JSON_INTEGRITY], [(in_ls, in_le)], lines=_line_of(data, [in_ls]),
                                    rules=[JSON_INTEGRITY])
        repairs.append((out_ls, out_le, fixed))
    if not repairs:
        return out, changed
    pieces: list[bytes] = []
    last = 0
    for a, b, rep in repairs:
        pieces += [out[last:a], rep]
        last = b
    pieces.append(out[last:])
    new_len = {a: len(rep) for a, _, rep in repairs}
    moved: list[tuple[int, int]] = []
    delta = 0
    for a, b in changed:
        length = new_len.get(a, b - a)
        moved.append((a + delta, a + delta + length))
        delta += length - (b - a)
    return b"".join(pieces), moved


def _line_groups(data: bytes, edits: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Edits grouped by the input line(s) they touch:
    ``(in_line_start, in_line_end, out_line_start, out_line_end)``."""
    groups: list[list[int]] = []
    floor = 0
    for s, e, os_, oe in edits:
        if groups and s <= groups[-1][1]:
            g = groups[-1]
            if e > g[1]:
                le = data.find(b"\n", e)
                g[1] = le if le >= 0 else len(data)
            g[3] = oe + (g[1] - e)
            continue
        ls = data.rfind(b"\n", floor, s) + 1
        le = data.find(b"\n", e)
        le = le if le >= 0 else len(data)
        groups.append([ls, le, os_ - (s - ls), oe + (le - e)])
        floor = le
    return [tuple(g) for g in groups]


def _unescaped_quote(buf: bytes, start: int, end: int, floor: int) -> bool:
    """A ``"`` in ``buf[start:end]`` not escaped by a backslash run (counted back to
    ``floor``, the line's start)."""
    pos = buf.find(b'"', start, end)
    while pos >= 0:
        run = 0
        while pos - run > floor and buf[pos - run - 1] == 0x5C:
            run += 1
        if run % 2 == 0:
            return True
        pos = buf.find(b'"', pos + 1, end)
    return False
