"""Benchmark (``bench/reconstruct.py --corpus``): a whole real corpus, abcd against
claude-code-log.

The real Claude Code fixture tree (``tests/fixtures/claude-code-log/real_projects``) is
ingested through a real daemon into one repository's lane (``ingest --into``). Then, in
paired rounds, the same run times

  abcd   ``abcd history reconstruct --all --out DIR``   (one process, one daemon request)
  ccl    ``claude-code-log --all-projects --projects-dir COPY -f md -o DIR``

where COPY is a fresh copy of the same tree each round (claude-code-log keeps a cache
inside it, which would make a second round on the same copy nearly free). The figure
is the median over rounds of abcd's time / claude-code-log's time; target ≤ 0.5.
claude-code-log is looked up as ``--ccl`` (default: ``claude-code-log`` on PATH, else
``/tmp/ccl/bin/claude-code-log``); install it outside the project's environment:
``python3 -m venv /tmp/ccl && /tmp/ccl/bin/pip install claude-code-log==1.7.0``.

The last line printed is one JSON object: ``{"abcd_s", "ccl_s", "abcd_vs_ccl",
"sessions", "artefacts_mb", "ccl_version", "rounds"}``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench._common import (ROOT, apply_env, check, cleanup, emit_json, isolated_env,
                           make_repo, median)

FIXTURES = ROOT / "tests" / "fixtures" / "claude-code-log" / "real_projects"
ABCD = Path(sys.executable).with_name("abcd")
TARGET = 0.5


def find_ccl(given: str) -> str:
    for candidate in (given, shutil.which("claude-code-log") or "", "/tmp/ccl/bin/claude-code-log"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("claude-code-log not found: python3 -m venv /tmp/ccl && "
                     "/tmp/ccl/bin/pip install claude-code-log==1.7.0 (or give --ccl PATH)")


def timed(argv: list[str], env: dict, cwd: Path) -> float:
    t0 = time.perf_counter()
    res = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, timeout=900)
    elapsed = time.perf_counter() - t0
    check(res.returncode == 0, f"{argv[:3]} exited {res.returncode}: {res.stderr[-500:]!r}")
    return elapsed


def run_corpus(rounds: int, ccl_given: str, check_target: bool) -> None:
    ccl = find_ccl(ccl_given)
    version = subprocess.run([ccl, "--version"], capture_output=True, text=True).stdout.strip()
    base, env = isolated_env("abcd-bench-corpus-")
    apply_env(env)
    from bench.hooks import Daemon

    daemon = None
    try:
        repo = base / "repo"
        make_repo(repo)
        tree = base / "ingested"
        shutil.copytree(FIXTURES, tree)
        daemon = Daemon(env, base / "daemon.log").wait_ready()
        timed([str(ABCD), "history", "ingest", str(tree), "--into", str(repo)], env, repo)
        listed = subprocess.run([str(ABCD), "history", "list", "--json"], env=env, cwd=repo,
                                capture_output=True, text=True, check=True).stdout
        import json

        sessions = len({r["session_id"] for r in json.loads(listed)})
        check(sessions > 30, f"only {sessions} sessions were stored")
        abcd_t, ccl_t, ratios, size = [], [], [], 0
        for i in range(rounds):
            out = base / f"abcd-out-{i}"
            out.mkdir()
            a = timed([str(ABCD), "history", "reconstruct", "--all", "--out", str(out)], env, repo)
            written = sorted(out.glob("*.md"))
            check(len(written) == sessions, f"abcd wrote {len(written)} of {sessions} artefacts")
            size = sum(p.stat().st_size for p in written)
            copy = base / f"ccl-tree-{i}"
            shutil.copytree(FIXTURES, copy)
            ccl_out = base / f"ccl-out-{i}"
            c = timed([ccl, "--all-projects", "--projects-dir", str(copy), "-f", "md",
                       "-o", str(ccl_out)], env, base)
            check(any(ccl_out.rglob("*.md")), "claude-code-log wrote nothing")
            abcd_t.append(a)
            ccl_t.append(c)
            ratios.append(a / c)
            shutil.rmtree(copy)
    finally:
        if daemon is not None:
            daemon.stop()
        cleanup(base)
    print(f"corpus: {sessions} sessions from {FIXTURES.relative_to(ROOT)}; {version}",
          file=sys.stderr)
    print(f"abcd median {median(abcd_t):.3f}s   claude-code-log median {median(ccl_t):.3f}s   "
          f"ratio {median(ratios):.3f} ({rounds} paired rounds, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f})", file=sys.stderr)
    figures = {"abcd_s": round(median(abcd_t), 3), "ccl_s": round(median(ccl_t), 3),
               "abcd_vs_ccl": round(median(ratios), 3), "sessions": sessions,
               "artefacts_mb": round(size / 1e6, 2), "ccl_version": version, "rounds": rounds}
    missed = figures["abcd_vs_ccl"] > TARGET
    if missed:
        print(f"MISSED: abcd_vs_ccl > {TARGET}", file=sys.stderr)
    emit_json(figures)
    if check_target and missed:
        sys.exit(1)
