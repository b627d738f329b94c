"""Benchmark: the daemon following a harness store — catch-up, idleness, latency, and
every way a session can end.

A seeded Claude Code store (``bench/ingest.py``'s tree: ``--files`` transcripts over
``--repos`` real repositories, a fifth main threads, the rest sub-agents with meta
sidecars) is laid out as ``$CLAUDE_CONFIG_DIR/projects``, and a real daemon
(``python -m abcd_client daemon run``, fresh ABCD_HOME / socket / TMPDIR) follows it
with no configuration beyond ``watch_settle_s = --settle``.

What is measured:

- ``first_pass_s``: daemon start until every transcript is a record (the start-up
  catch-up stages them all through ingest, the drain stores them).
- ``noop_pass_s``: the daemon restarted over the same store: the catch-up pass as the
  daemon timed it (walk + harness ledger, nothing read); it must stage and read 0.
- ``idle_cpu_pct``: the daemon's CPU (utime+stime) over ``--idle-s`` seconds of
  watching the store with nothing changing, in percent of one core.
- ``quiet_to_stored_s``: one transcript grows (a resumed session); from its last write
  to the record of its new bytes.
- ``exit_paths_covered``: the exit paths of ``tests/ingest/test_follow.py`` played by
  its fake harness against this daemon — SessionEnd, ``/exit`` (Stop only), print mode,
  SIGKILL mid-response (no hook), ``/clear`` with stdin left open, resumed and grown,
  deleted by retention after storing — counting those whose main thread and every
  sub-agent end up stored exactly once, in their final version, within settle + 5 s of
  going quiet (the record surviving deletion for the last).

Targets: every transcript stored by the first pass; ``noop_pass_s <= 1``;
``idle_cpu_pct <= 0.5``; ``quiet_to_stored_s <= settle + 2``; all 7 exit paths covered.
Prints a table, then, as its LAST line, one JSON object: ``{"transcripts",
"first_pass_s", "noop_pass_s", "idle_cpu_pct", "quiet_to_stored_s",
"exit_paths_covered", ...}``.

    .venv/bin/python bench/watch.py [--files 2000] [--repos 20] [--settle 2] [--idle-s 10]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as c  # noqa: E402
import hooks as hooks_bench  # noqa: E402  (its Daemon process wrapper and idle probe)
import ingest as ingest_bench  # noqa: E402  (its seeded harness tree)

sys.path.insert(0, str(c.ROOT))
from tests.daemon.procs import wait_for  # noqa: E402
from tests.ingest.fake_claude import FakeClaude  # noqa: E402

TARGETS = {"noop_pass_s": 1.0, "idle_cpu_pct": 0.5, "quiet_slack_s": 2.0, "exit_paths": 7}
EXIT_SLACK_S = 5.0


def record_count(home: Path) -> int:
    total = 0
    for lane in (home / "transcripts").glob("*/records"):
        total += sum(1 for n in os.listdir(lane) if n.endswith(".md"))
    return total


def status(env: dict) -> dict:
    res = subprocess.run([sys.executable, "-m", "abcd_client", "daemon", "status", "--json"], env=env,
                         capture_output=True, text=True, timeout=60)
    return json.loads(res.stdout) if res.stdout else {}


def wait(predicate, timeout: float, interval: float = 0.05):
    """The predicate's first true value within ``timeout`` seconds, else None."""
    try:
        return wait_for(predicate, timeout, interval)
    except AssertionError:
        return None


def caught_up(env: dict) -> dict | None:
    root = status(env).get("harness_store") or {}
    return root if root.get("caught_up_at") else None


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stored_once(lane, harness: FakeClaude) -> bool:
    """Every transcript of the session is exactly one record, of its current bytes."""
    from abcd_daemon.store.records import list_records

    records = [r for r in list_records(lane) if r.session_id == harness.session]
    by_key = {}
    for r in records:
        by_key.setdefault(r.agent_id, []).append(r)
    expected = {"": harness.path, **harness.agents}
    return set(by_key) == set(expected) and all(
        len(by_key[a]) == 1 and by_key[a][0].source_sha256 == digest(p) for a, p in expected.items())


def played(h: FakeClaude, *, prompt_hook: bool = True, end: bool = False) -> FakeClaude:
    """A session: started, a prompt, two sub-agents (one flushing its last line after
    SubagentStop), Stop; SessionEnd when ``end``."""
    h.start()
    h.prompt("Look at the repository.", hook=prompt_hook)
    h.respond("Reading.")
    h.spawn("Explore", flush_late=True)
    h.spawn("Plan", depth=1)
    h.respond("All done.")
    h.stop()
    if end:
        h.end()
    return h


def exit_paths(base: Path, env: dict, lane, repo: Path, settle: float) -> dict[str, bool]:
    """Play each exit path once; True where the session was stored once in time."""
    config_dir = Path(env["CLAUDE_CONFIG_DIR"])
    fake = lambda **kw: FakeClaude(config_dir, repo, env, **kw)  # noqa: E731
    within = settle + EXIT_SLACK_S
    out: dict[str, bool] = {}

    def check(name: str, harness: FakeClaude, quiet_at: float) -> None:
        ok = wait(lambda: stored_once(lane, harness), max(quiet_at + within - time.monotonic(), 0.05))
        out[name] = bool(ok)

    check("session-end", played(fake(), end=True), time.monotonic())
    check("exit", played(fake()), time.monotonic())
    check("print-mode", played(fake(), prompt_hook=False), time.monotonic())

    h = fake(hooks=False)
    ready, script = base / "killed.ready", base / "killed.json"
    script.write_text(json.dumps({"config_dir": str(config_dir), "cwd": str(repo), "session": h.session,
                                  "hooks": False, "ready": str(ready),
                                  "steps": [["prompt", "Go."], ["respond", "One."], ["spawn", "Explore"],
                                            ["hang"]]}))
    proc = subprocess.Popen([sys.executable, "-m", "tests.ingest.fake_claude", str(script)],
                            env=dict(env, PYTHONPATH=str(c.ROOT)), cwd=c.ROOT)
    wait(ready.exists, 60)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    h.agents = {p.name[6:-6]: p for p in (h.project / h.session / "subagents").glob("agent-*.jsonl")}
    check("sigkill", h, time.monotonic())

    h = played(fake())
    hook = h.end_with_stdin_open("clear")
    quiet_at = time.monotonic()
    fake().start("clear")
    check("clear-open-stdin", h, quiet_at)
    hook.finish(harness_timeout=10.0)

    h = played(fake(), end=True)
    first = wait(lambda: stored_once(lane, h), within)
    day = 86400 * 10**9
    for path in h.all_paths():
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns - day, st.st_mtime_ns - day))
    resumed = fake(session=h.session)
    resumed.agents = dict(h.agents)
    resumed.start("resume")
    resumed.prompt("One more thing.")
    resumed.respond("Again.")
    resumed.spawn("Explore")
    resumed.stop()
    check("resumed-grown", resumed, time.monotonic())
    out["resumed-grown"] = out["resumed-grown"] and bool(first)

    h = played(fake(), end=True)
    stored = wait(lambda: stored_once(lane, h), within)
    keys = {"": h.path, **h.agents}
    h.path.unlink()
    shutil.rmtree(h.project / h.session)
    time.sleep(settle + 1)

    from abcd_daemon.store.records import list_records

    kept = {r.agent_id for r in list_records(lane) if r.session_id == h.session}
    out["deleted-by-retention"] = bool(stored) and kept == set(keys)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--repos", type=int, default=20)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--settle", type=float, default=2.0)
    ap.add_argument("--idle-s", type=float, default=10.0)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args(argv)

    base, env = c.isolated_env("abcd-bench-watch-")
    c.apply_env(env)
    try:
        from abcd_daemon.store.lane import Lane
        from abcd_daemon.paths import Home

        t0 = time.perf_counter()
        repos = ingest_bench.make_repos(base, args.repos + 1)
        exit_repo, exit_sha = repos.pop()
        projects, items = ingest_bench.build_tree(base / "claude", repos, files=args.files, seed=args.seed)
        assert projects == Path(env["CLAUDE_CONFIG_DIR"]) / "projects"
        mb = sum(Path(p).stat().st_size for p, _, _ in items) / c.MB
        old = time.time_ns() - 3600 * 10**9  # written an hour ago: quiet
        for path, _, _ in items:
            os.utime(path, ns=(old, old))
        print(f"seeded {len(items)} transcripts ({mb:.1f} MB) over {args.repos} projects in "
              f"{time.perf_counter() - t0:.1f} s")
        home = Path(env["ABCD_HOME"])
        home.mkdir(parents=True)
        (home / "config.toml").write_text(f"watch_settle_s = {args.settle}\n")

        started = time.perf_counter()
        daemon = hooks_bench.Daemon(env, base / "daemon-1.log").wait_ready()
        try:
            done = wait(lambda: record_count(home) >= len(items), 1800, interval=0.5)
            first_pass = time.perf_counter() - started
            c.check(done is not None, f"only {record_count(home)} of {len(items)} stored by the first pass")
        finally:
            c.check(daemon.stop() == 0, "the daemon did not stop cleanly")

        daemon = hooks_bench.Daemon(env, base / "daemon-2.log").wait_ready()
        try:
            root = wait(lambda: caught_up(env), 120, interval=0.2)
            c.check(root is not None, "the restarted daemon never caught up")
            log = (base / "daemon-2.log").read_text()
            line = re.search(r"caught up on (\d+) transcript\(s\) in [\d.]+s \((\d+) read, (\d+) staged", log)
            c.check(line is not None and line.group(2) == "0" and line.group(3) == "0",
                    f"the second pass read or staged something: {line and line.group(0)}")
            noop_pass = root["catch_up_s"]
            time.sleep(3.0)  # the summary refresh that follows a catch-up
            idle = hooks_bench.phase_idle(daemon, args.idle_s)

            from abcd_daemon.store.records import list_records

            path = Path(items[0][0])  # a main thread: its session resumes and grows
            sha = repos[items[0][2]][1]
            lane = Lane(Home(home), sha)
            with open(path, "a") as f:
                for i in range(3):
                    f.write(json.dumps({"type": "user", "sessionId": path.stem, "cwd": str(repos[items[0][2]][0]),
                                        "message": {"role": "user", "content": f"more {i}"}}) + "\n")
                    f.flush()
                    time.sleep(0.2)
            quiet_at = time.monotonic()
            new_sha = digest(path)
            got = wait(lambda: any(r.source_sha256 == new_sha for r in list_records(lane)), 60, interval=0.05)
            c.check(got is not None, "the grown transcript was never stored")
            quiet_to_stored = time.monotonic() - quiet_at

            paths = exit_paths(base, env, Lane(Home(home), exit_sha), exit_repo, args.settle)
        finally:
            c.check(daemon.stop() == 0, "the daemon did not stop cleanly")

        out = {
            "transcripts": len(items),
            "first_pass_s": round(first_pass, 2),
            "noop_pass_s": round(noop_pass, 3),
            "idle_cpu_pct": round(idle, 3),
            "quiet_to_stored_s": round(quiet_to_stored, 2),
            "exit_paths_covered": sum(paths.values()),
            "exit_paths": paths,
            "settle_s": args.settle,
            "mb": round(mb, 1),
            "projects": args.repos,
        }
        v = lambda ok: "ok" if ok else "MISSED"  # noqa: E731
        print(c.table([
            ("first pass (all stored) s", out["first_pass_s"], f"{len(items)} stored", "ok"),
            ("noop pass s", out["noop_pass_s"], f"<= {TARGETS['noop_pass_s']:g}",
             v(out["noop_pass_s"] <= TARGETS["noop_pass_s"])),
            ("idle CPU %", out["idle_cpu_pct"], f"<= {TARGETS['idle_cpu_pct']:g}",
             v(out["idle_cpu_pct"] <= TARGETS["idle_cpu_pct"])),
            ("quiet to stored s", out["quiet_to_stored_s"], f"<= {args.settle + TARGETS['quiet_slack_s']:g}",
             v(out["quiet_to_stored_s"] <= args.settle + TARGETS["quiet_slack_s"])),
            ("exit paths covered", out["exit_paths_covered"], f"= {TARGETS['exit_paths']}",
             v(out["exit_paths_covered"] == TARGETS["exit_paths"])),
        ], ("measure", "value", "target", "")))
        for name, ok in paths.items():
            print(f"  {name}: {'stored once in time' if ok else 'NOT COVERED'}")
        print()
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            c.cleanup(base)
    c.emit_json(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
