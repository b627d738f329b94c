"""Fuzzing campaign (a script, not a test): ``.venv/bin/python bench/fuzz.py --minutes N``.

Runs the very properties CI runs — every ``@fuzz`` test in ``tests/fuzz/`` (the wire
codec, the record format, the stage sidecar, the transcript adapters, the scanner, the
fenced writer), with the same strategies and the same assertions — for ``N`` minutes
instead of CI's bounded example counts. Properties take turns: each turn runs one
hypothesis batch (fresh random seed, no example database), sized to take a few seconds,
so every property gets about the same wall-clock share.

A property that fails is reported with hypothesis's shrunk falsifying example and is
not run again. A failure of a test CI pins ``xfail`` (a known product bug) is counted
as ``known_failures``, not as a new failure. Prints one line per property, then as its
LAST line one JSON object::

    {"minutes": N, "examples": <inputs tried, all properties>, "failures": <new>,
     "known_failures": <xfail-pinned>, "properties": <count>, "seconds": <wall clock>}

Exit status 1 when ``failures`` > 0.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import Phase, given, settings  # noqa: E402

from tests.fuzz.fuzzing import SUPPRESSED  # noqa: E402

#: A batch aims at this many seconds (then the next property takes its turn).
BATCH_SECONDS = 4.0


class Property:
    def __init__(self, module: str, test) -> None:
        self.name = f"{module}::{test.__name__}"
        self.prop = test.fuzz_property
        self.strategy = test.fuzz_strategy
        self.ci_examples = test.fuzz_examples
        marks = getattr(test, "pytestmark", [])
        self.known_bug = next((m.kwargs.get("reason", "xfail") for m in marks
                               if m.name == "xfail"), "")
        self.examples = 0
        self.seconds = 0.0
        self.batch = self.ci_examples
        self.failure = ""

    def run_batch(self, budget_s: float) -> None:
        per_example = self.seconds / self.examples if self.examples else 0.0
        if per_example:
            self.batch = max(1, min(int(min(BATCH_SECONDS, budget_s) / per_example), 100_000))

        @functools.wraps(self.prop)
        def counted(*args, **kwargs):
            self.examples += 1
            return self.prop(*args, **kwargs)

        test = settings(max_examples=self.batch, deadline=None, database=None,
                        suppress_health_check=SUPPRESSED,
                        phases=[Phase.generate, Phase.target, Phase.shrink])(
            given(self.strategy)(counted))
        started = time.monotonic()
        try:
            test()
        except Exception as exc:  # noqa: BLE001 - a failing property is the finding
            notes = "\n".join(getattr(exc, "__notes__", []))
            self.failure = (f"{type(exc).__name__}: {exc}\n{notes}".strip() + "\n"
                            + "".join(traceback.format_exception(exc)[-6:]))
        finally:
            self.seconds += time.monotonic() - started


def discover(only: str = "") -> list[Property]:
    props = []
    for path in sorted((ROOT / "tests" / "fuzz").glob("test_*.py")):
        module = importlib.import_module(f"tests.fuzz.{path.stem}")
        for name in sorted(vars(module)):
            test = getattr(module, name)
            if name.startswith("test_") and hasattr(test, "fuzz_property"):
                prop = Property(path.stem, test)
                if only in prop.name:
                    props.append(prop)
    return props


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=1.0, help="wall-clock budget (default 1)")
    ap.add_argument("--only", default="", help="run only properties whose name contains this")
    args = ap.parse_args(argv)
    props = discover(args.only)
    if not props:
        print("no fuzz properties found", file=sys.stderr)
        return 2
    started = time.monotonic()
    deadline = started + args.minutes * 60
    print(f"fuzzing {len(props)} properties for {args.minutes:g} minute(s)", flush=True)
    while True:
        live = [p for p in props if not p.failure]
        left = deadline - time.monotonic()
        if not live or left <= 0.5:
            break
        # The least-run property (by time) goes next, with a share of what is left.
        prop = min(live, key=lambda p: p.seconds)
        prop.run_batch(max(left / len(live), 0.5))
        if prop.failure:
            tag = "KNOWN BUG" if prop.known_bug else "FAILED"
            print(f"\n{tag}: {prop.name} after {prop.examples} example(s)\n{prop.failure}",
                  flush=True)
    elapsed = time.monotonic() - started
    print()
    print(f"{'property':<100} {'examples':>9} {'seconds':>8}  result")
    for p in props:
        result = "ok" if not p.failure else ("known bug" if p.known_bug else "FAILED")
        print(f"{p.name:<100} {p.examples:>9} {p.seconds:>8.1f}  {result}")
    failures = sum(1 for p in props if p.failure and not p.known_bug)
    known = sum(1 for p in props if p.failure and p.known_bug)
    print(json.dumps({"minutes": args.minutes, "examples": sum(p.examples for p in props),
                      "failures": failures, "known_failures": known,
                      "properties": len(props), "seconds": round(elapsed, 1)}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
