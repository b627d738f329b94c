"""Running every transcript file through the redactor and judging every example.

The main pass runs the files one at a time (its summed wall time is the speed
figure). A refused file's examples are all refused and not caught; the file is
then attributed (:meth:`Runner.attribute`) so each example also gets the verdict
of the run that decided it (``alone``), and those refusing on their own are known.
"""

from __future__ import annotations

import dataclasses
import random

from .contexts import CONTEXTS, contexts_for, place
from .example import Corpus
from .runner import Item, Result, Runner
from .score import is_json, kept, survives


@dataclasses.dataclass
class Outcome:
    """One placed example's fate. ``ok`` is caught (positive) / kept (negative) in
    the main pass (False when its file was refused); ``alone`` the same judged by
    the run that decided it; ``rules`` the rules ``--json`` reported on its line."""

    item: Item
    ok: bool
    alone: bool
    in_refused_file: bool = False
    refused_alone: bool = False
    rules: tuple[str, ...] = ()


@dataclasses.dataclass
class Measurement:
    outcomes: list[Outcome]
    files: int
    refused_files: int
    json_lines: int
    json_valid_lines: int
    bytes: int
    seconds: float
    scanner: str
    misaligned: int


def layout(corpus: Corpus, lines_per_file: int, seed: int) -> list[list[Item]]:
    """Every example placed in each of its contexts; per context shuffled (seeded)
    and cut into files of ``lines_per_file`` lines."""
    rng = random.Random(seed ^ 0x5EC12E7)
    files = []
    for ctx in CONTEXTS:
        items = [Item(e, ctx, place(e, ctx), positive) for positive, group in
                 ((True, corpus.positives), (False, corpus.negatives)) for e in group
                 if ctx in contexts_for(e)]
        rng.shuffle(items)
        files += [items[i:i + lines_per_file] for i in range(0, len(items), lines_per_file)]
    return files


def judge(item: Item, out_line: str | None) -> bool:
    """Caught (positive) or kept (negative); a missing output line fails both."""
    if out_line is None:
        return False
    if item.positive:
        return not survives(item.example, out_line)
    return kept(item.example, item.context, item.line, out_line)


def measure(files: list[list[Item]], runner: Runner) -> Measurement:
    outcomes: list[Outcome] = []
    results: list[Result] = []
    json_lines = json_ok = 0
    for n, items in enumerate(files):
        res = runner.run(items, f"{n:03d}-{items[0].context}")
        results.append(res)
        if res.refused is None:
            json_lines += len(items)
            for i, item in enumerate(items):
                out = res.line(i)
                json_ok += out is not None and is_json(out)
                ok = judge(item, out)
                outcomes.append(Outcome(item, ok, ok, rules=tuple(res.findings.get(i + 1, ()))))
            continue
        for item, deciding, i in runner.attribute(items, f"{n:03d}", res):
            if deciding.refused is not None:
                rule = deciding.refused.get("rule")
                outcomes.append(Outcome(item, False, False, True, True, (f"refused:{rule}",)))
            else:
                outcomes.append(Outcome(item, False, judge(item, deciding.line(i)), True,
                                        rules=tuple(deciding.findings.get(i + 1, ()))))
    return Measurement(
        outcomes=outcomes, files=len(files), refused_files=sum(r.refused is not None for r in results),
        json_lines=json_lines, json_valid_lines=json_ok, bytes=sum(r.bytes for r in results),
        seconds=sum(r.seconds for r in results), scanner=next((r.scanner for r in results if r.scanner), "?"),
        misaligned=runner.misaligned)
