"""Recall benchmark (a script, not a test): ``.venv/bin/python bench/recall.py``.

Measures ``abcd redact`` on a labelled corpus that is independent of the ruleset it
measures (``bench/recall_corpus``): secrets generated from >= 150 providers'
documented token formats plus generic families (assignments, connection strings,
auth headers, URL userinfo, JWTs, PEM keys, prose), and near-miss negatives.
Every example is placed, one per line, in six Claude Code transcript contexts
(tool result, Bash command, nested JSON, percent-encoded WebFetch URL, assistant
text, ``.env`` file read); each context's lines are shuffled with the negatives
and written to transcript files of ``--lines-per-file`` lines.

Each file goes through the real CLI, ``[python, -m, abcd_client, redact, FILE,
--out, OUT, --json]`` (``--cmd`` replaces everything before ``FILE``), with
ABCD_HOME in a temporary directory, one file at a time. Then:

- a positive is caught iff no 8-character run of its secret's body survives in
  its output line in any encoding (``recall_corpus.score``); ``recall`` is caught
  / placed positives, per context in ``by_context``;
- a refused file's examples are all counted as refused and NOT caught (a refused
  transcript is not stored); ``refused`` = examples in refused files / all placed
  examples. The refused file is then re-run without the line each refusal names
  (or by halves when it names none), and each named example alone, to find the
  examples that refuse on their own (``recall_alone`` judges every example by
  the run that decided it: alone when it refuses, else a run that did not refuse);
- ``fp_rate`` = negatives altered (any occurrence of the near miss masked) or
  refusing on their own / placed negatives (a negative merely sharing a file with
  a refusing example is counted in ``refused``, not here); the report names the
  rules ``--json`` found on those lines and the negative's family, never the
  string itself;
- ``json_valid`` = output lines that are JSON / input lines that were JSON (all
  are), over the files that were not refused;
- ``mb_per_s`` = input bytes / summed wall time of the redact processes of the
  main pass, process start-up included.

``--examples FILE`` measures an outside labelled set instead (JSON Lines, one
example per line: ``bench/recall_corpus/external.py``) in the same six contexts, the
same way — a scanner's published test cases, a red team's list — kept out of the
repository; only its figures go in the README.

Prints per-context and per-family tables, the families below 0.97, the false
positives, then as its LAST line one JSON object: ``{"recall", "fp_rate",
"refused", "json_valid", "mb_per_s", "families", "providers", "examples",
"negatives", "by_context", ...}`` where ``examples`` / ``negatives`` count the
corpus's labelled examples (each is placed in several contexts: ``lines``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import cleanup, isolated_env  # noqa: E402
from recall_corpus import CONTEXTS, build  # noqa: E402
from recall_corpus.external import load  # noqa: E402
from recall_corpus.measure import Measurement, layout, measure  # noqa: E402
from recall_corpus.runner import Item, Runner  # noqa: E402

TARGET = 0.97


def write_manifest(path: Path, files: list[list[Item]]) -> None:
    """Which example each line of each transcript file holds (never the secret)."""
    with path.open("w") as f:
        for n, items in enumerate(files):
            for i, it in enumerate(items):
                f.write(json.dumps({"file": f"{n:03d}-{it.context}.jsonl", "line": i + 1,
                                    "family": it.example.family, "context": it.context,
                                    "positive": it.positive}) + "\n")


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 1.0


def report(m: Measurement, corpus) -> dict:
    """Print the tables; return the summary object."""
    pos = [o for o in m.outcomes if o.item.positive]
    neg = [o for o in m.outcomes if not o.item.positive]
    by_ctx = {}
    print(f"\n{'context':<16}{'n':>6}{'recall':>9}{'refused':>9}")
    for c in CONTEXTS:
        here = [o for o in pos if o.item.context == c]
        by_ctx[c] = _ratio(sum(o.ok for o in here), len(here))
        refused = sum(o.in_refused_file for o in m.outcomes if o.item.context == c)
        print(f"{c:<16}{len(here):>6}{by_ctx[c]:>9.3f}{refused:>9}")

    fam = defaultdict(list)
    for o in pos:
        fam[o.item.example.family].append(o)
    table = {f: (_ratio(sum(o.ok for o in v), len(v)), _ratio(sum(o.alone for o in v), len(v)), len(v))
             for f, v in fam.items()}
    print(f"\n{'family (worst first)':<44}{'n':>5}{'recall':>9}{'alone':>8}")
    for f, (r, ra, n) in sorted(table.items(), key=lambda kv: (kv[1][0], kv[0])):
        print(f"{f:<44}{n:>5}{r:>9.3f}{ra:>8.3f}")
    weak = sorted(f for f, (r, _, _) in table.items() if r < TARGET)
    print(f"\nfamilies below {TARGET}: {len(weak)} of {len(table)}")
    print("  " + (", ".join(weak) if weak else "(none)"))

    fps = [o for o in neg if not o.alone]
    print(f"\nfalse positives: {len(fps)} of {len(neg)} negative lines "
          "(family, context, count, rules --json found on the line; never the string)")
    groups = defaultdict(lambda: [0, set()])
    for o in fps:
        g = groups[(o.item.example.family, o.item.context)]
        g[0] += 1
        g[1].update(o.rules or ("no finding reported",))
    for (f, c), (n, rules) in sorted(groups.items()):
        print(f"  {f:<30} {c:<15} {n:>4}  {', '.join(sorted(rules))}")

    in_refused = sum(o.in_refused_file for o in m.outcomes)
    if m.refused_files:
        alone = [o for o in m.outcomes if o.refused_alone]
        print(f"\nrefused: {m.refused_files} of {m.files} files ({in_refused} examples); "
              f"examples refusing on their own: {len(alone)}")
        counts = defaultdict(int)
        for o in alone:
            counts[(o.item.example.family, o.item.context, o.rules[0])] += 1
        for (f, c, r), n in sorted(counts.items()):
            print(f"  {f:<40} {c:<15} {n:>4}  {r}")
    if m.misaligned:
        print(f"\nWARNING: {m.misaligned} runs returned a different number of lines than they were given "
              "(their examples count as not caught / not kept)")
    print(f"\nmb_per_s: {m.bytes / 1e6:.2f} MB over {m.files} runs in {m.seconds:.2f}s, process start-up included")
    return {
        "recall": _ratio(sum(o.ok for o in pos), len(pos)),
        "fp_rate": _ratio(len(fps), len(neg)),
        "refused": _ratio(in_refused, len(m.outcomes)),
        "json_valid": _ratio(m.json_valid_lines, m.json_lines),
        "mb_per_s": round(m.bytes / 1e6 / m.seconds, 3) if m.seconds else 0.0,
        "families": len(table),
        "providers": len(corpus.providers),
        "examples": len(corpus.positives),
        "negatives": len(corpus.negatives),
        "by_context": by_ctx,
        "lines": len(m.outcomes),
        "recall_alone": _ratio(sum(o.alone for o in pos), len(pos)),
        "refused_files": _ratio(m.refused_files, m.files),
        "scanner": m.scanner,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-family", type=int, default=4)
    ap.add_argument("--lines-per-file", type=int, default=300)
    ap.add_argument("--keep", metavar="DIR", help="keep the generated transcripts, outputs and manifest in DIR")
    ap.add_argument("--quick", action="store_true", help="one example per family (four per negative family)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel runs when attributing refusals")
    ap.add_argument("--examples", metavar="FILE", type=Path,
                    help="measure on this external labelled set (JSON Lines; bench/recall_corpus/external.py) "
                         "instead of the generated corpus")
    ap.add_argument("--cmd", help="command replacing `python -m abcd_client redact` "
                                  "(FILE --out OUT --json are appended)")
    args = ap.parse_args(argv)
    per_family = 1 if args.quick else args.per_family
    cmd = shlex.split(args.cmd) if args.cmd else [sys.executable, "-m", "abcd_client", "redact"]

    t0 = time.monotonic()
    if args.examples:
        try:
            corpus = load(args.examples)
        except (OSError, ValueError) as err:
            print(f"bench/recall.py: {err}", file=sys.stderr)
            return 2
    else:
        corpus = build(args.seed, per_family)
    files = layout(corpus, args.lines_per_file, args.seed)
    base, env = isolated_env("abcd-recall-")
    work = Path(args.keep) if args.keep else base / "files"
    work.mkdir(parents=True, exist_ok=True)
    write_manifest(work / "manifest.jsonl", files)
    try:
        m = measure(files, Runner(cmd, env, base, work, jobs=args.jobs))
    finally:
        cleanup(base)  # ABCD_HOME and, without --keep, the transcripts
    source = f"examples {args.examples}" if args.examples else f"seed {args.seed}, {per_family} per family"
    print(f"scanner: {m.scanner}; {source}; {m.files} transcript files, "
          f"{len(m.outcomes)} lines, {m.bytes / 1e6:.2f} MB; measured in {time.monotonic() - t0:.1f}s")
    summary = report(m, corpus)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
