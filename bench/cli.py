"""Benchmark: how long the ``abcd`` CLI takes to start, ask the daemon and print.

In a fresh isolated environment (its own ABCD_HOME, socket and git repository) a real
daemon serves a small stored session (one main thread, two sub-agents, ~60 kB). Then,
round after round, the same interpreter runs — back to back, in a shuffled order —

  bare         ``python -I -c pass`` (the floor: an interpreter that does nothing)
  help         ``abcd --help``
  list         ``abcd history list``         (daemon-served)
  status       ``abcd daemon status``        (daemon-served)
  reconstruct  ``abcd history reconstruct <session> --out DIR``   (daemon-served)
  search       ``abcd search <word> --json``  (daemon-served; reported on stderr only:
               the CLI's share of a search, on a one-session index — ``bench/search.py``
               measures search end to end on a corpus of issue 14's size)
  floor        ``python -c "import typer, msgspec"`` (reported on stderr only: what the
               CLI framework and the wire codec cost before abcd runs a line)

Each verb's figure is the median over rounds of (its wall time / that round's bare
wall time): paired runs, so a machine that is busy for a while slows both sides of a
pair alike. The package is byte-compiled first (as ``pip install`` does), so a run
measures start-up, not compiling. The target is every ratio ≤ 4.

The last line printed is one JSON object:
``{"list_vs_bare", "status_vs_bare", "help_vs_bare", "reconstruct_small_vs_bare"}``.

    .venv/bin/python bench/cli.py [--rounds 30] [--check]
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (ROOT, TranscriptMaker, apply_env, check, cleanup,  # noqa: E402
                           emit_json, isolated_env, make_repo, median)

PYTHON = Path(sys.executable)
ABCD = PYTHON.with_name("abcd")
TARGET = 4.0
SESSION = "5e55b0a1-c11b-4e4c-9000-000000000001"


def run(argv: list[str], env: dict, cwd: str) -> float:
    """Seconds from spawn to exit (stdout and stderr discarded). Raises on a failure."""
    read, write = os.open(os.devnull, os.O_RDONLY), os.open(os.devnull, os.O_WRONLY)
    try:
        here = os.getcwd()
        os.chdir(cwd)
        try:
            t0 = time.perf_counter()
            pid = os.posix_spawn(argv[0], argv, env, file_actions=[
                (os.POSIX_SPAWN_DUP2, read, 0), (os.POSIX_SPAWN_DUP2, write, 1),
                (os.POSIX_SPAWN_DUP2, write, 2)])
            _, status = os.waitpid(pid, 0)
            elapsed = time.perf_counter() - t0
        finally:
            os.chdir(here)
    finally:
        os.close(read)
        os.close(write)
    code = os.waitstatus_to_exitcode(status)
    check(code == 0, f"{argv[1:]} exited with {code}")
    return elapsed


def store_session(sha: str, repo: Path) -> None:
    """One main thread and two sub-agents, written as records into the repo's lane."""
    from abcd_daemon.paths import Home
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename

    lane = Lane(Home.from_env(), sha).ensure("records")
    maker = TranscriptMaker(7, cwd=str(repo), home="/home/bench", secret_rate=0)
    for i, agent in enumerate(("", maker.agent_id(), maker.agent_id())):
        body = maker.transcript(20_000, session=SESSION, agent=agent)
        record = Record(session_id=SESSION, root_commit=sha, agent_id=agent,
                        agent_type="general-purpose" if agent else "",
                        source_sha256=hashlib.sha256(body).hexdigest(),
                        captured_at=format_rfc3339_ns((1_780_000_000 + i) * 10**9))
        (lane.records / record_filename(record)).write_bytes(format_record(record, body))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "abcd_client"), quiet=1)
    compileall.compile_dir(str(ROOT / "abcd_daemon"), quiet=1)
    base, env = isolated_env("abcd-bench-cli-")
    apply_env(env)
    daemon = None
    try:
        repo = base / "repo"
        sha = make_repo(repo)
        store_session(sha, repo)
        out = base / "out"
        out.mkdir()
        from bench.hooks import Daemon

        daemon = Daemon(env, base / "daemon.log").wait_ready()
        verbs = {
            "bare": [str(PYTHON), "-I", "-c", "pass"],
            # not a verb: what importing the CLI framework and the wire codec alone costs
            "floor": [str(PYTHON), "-c", "import typer, msgspec"],
            "help": [str(ABCD), "--help"],
            "list": [str(ABCD), "history", "list"],
            "status": [str(ABCD), "daemon", "status"],
            "reconstruct_small": [str(ABCD), "history", "reconstruct", SESSION, "--out", str(out)],
            "search": [str(ABCD), "search", "the", "--json"],
        }
        for argv in verbs.values():  # warm the page cache; check every verb succeeds
            run(argv, env, str(repo))
        check((out / f"{SESSION}.md").exists(), "reconstruct wrote no artefact")
        rng = random.Random(13)
        times: dict[str, list[float]] = {name: [] for name in verbs}
        ratios: dict[str, list[float]] = {name: [] for name in verbs if name != "bare"}
        for _ in range(args.rounds):
            order = list(verbs)
            rng.shuffle(order)
            got = {name: run(verbs[name], env, str(repo)) for name in order}
            for name, seconds in got.items():
                times[name].append(seconds)
                if name != "bare":
                    ratios[name].append(seconds / got["bare"])
    finally:
        if daemon is not None:
            daemon.stop()
        cleanup(base)
    for name in verbs:
        line = f"{name:<18} median {median(times[name]) * 1000:6.1f} ms"
        if name != "bare":
            line += f"   {median(ratios[name]):.2f}x bare"
        print(line, file=sys.stderr)
    print(f"({args.rounds} paired rounds, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f})",
          file=sys.stderr)
    figures = {f"{name}_vs_bare": round(median(ratios[name]), 2)
               for name in ("list", "status", "help", "reconstruct_small")}
    missed = [k for k, v in figures.items() if v > TARGET]
    if missed:
        print(f"MISSED (> {TARGET}x): " + ", ".join(missed), file=sys.stderr)
    emit_json(figures)
    if args.check and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
