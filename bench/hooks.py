"""Benchmark: the hook shim and the daemon behind it, with real processes.

What is measured, against a real daemon (``python -m abcd_client daemon run``) in a
fresh temporary ABCD_HOME / ABCD_SOCKET / TMPDIR and one real git repository:

1. Shim wall time, process start to exit (``posix_spawn`` → ``waitpid``), over
   ``--shim-runs`` SubagentStop runs with the daemon up (so every run spools and
   rings), interleaved with ``python3 -I -S -c pass`` measured the same way in the
   same run. Two pairs: the shim file exec'd directly (its shebang is
   ``/usr/bin/env -S python3 -I -S``, so ``python3`` is whatever PATH gives — here
   possibly a pyenv shim script) vs ``python3 -I -S -c pass`` resolved from the same
   PATH — the headline; and both run with the resolved real interpreter. Before each
   run the daemon is let go quiet (spool empty), so runs do not queue behind it.
   ``shim_ratio`` = shim median ÷ bare median.
2. End to end: ``--e2e`` single SubagentStop payloads with ~1 MB transcripts, one at a
   time; the time from the shim's exit until the record file is present.
3. Burst: ``--burst`` shims started at once, each a distinct agent of one session in
   the repository, each with a ~1 MB transcript: none lost, no duplicates, and the
   time from the first spawn until the last record is present.
4. The daemon's peak RSS during the burst (VmHWM, reset just before it through
   ``/proc/<pid>/clear_refs`` where allowed, and VmRSS sampled every 50 ms), and its
   CPU use (utime+stime from ``/proc/<pid>/stat``) over ``--idle-s`` seconds of
   idleness afterwards.

Targets: shim_ratio <= 1.5; shim p99 <= 3 x bare python median; e2e median <= 1 s;
burst_lost = 0; burst_dupes = 0; daemon RSS <= 150 MB; idle CPU <= 0.5 %.

Prints a table, then, as its LAST line, one JSON object:
{"shim_median_ms", "shim_p99_ms", "bare_python_median_ms", "shim_ratio",
 "e2e_median_s", "burst_n", "burst_lost", "burst_dupes", "burst_all_stored_s",
 "daemon_rss_mb", "idle_cpu_pct", ...}.

    .venv/bin/python bench/hooks.py [--shim-runs 200] [--e2e 20] [--burst 200] [--idle-s 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as c  # noqa: E402

SHIM = c.ROOT / "hooks" / "abcd-hook"
PYTHON = c.ROOT / ".venv" / "bin" / "python"
CLK_TCK = os.sysconf("SC_CLK_TCK")

TARGETS = {
    "shim_ratio": 1.5,
    "shim_p99_vs_bare": 3.0,
    "e2e_median_s": 1.0,
    "daemon_rss_mb": 150.0,
    "idle_cpu_pct": 0.5,
}


# --------------------------------------------------------------------------- processes


class Daemon:
    """The daemon as a real process, with /proc readings."""

    def __init__(self, env: dict, log: Path) -> None:
        self.env = env
        self.log = open(log, "ab")
        self.proc = subprocess.Popen([str(PYTHON), "-m", "abcd_client", "daemon", "run"], env=env,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        self.pid = self.proc.pid

    def wait_ready(self, timeout: float = 30.0) -> "Daemon":
        from abcd_client.connect import connect
        from abcd_daemon.errors import DaemonUnavailable

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"the daemon exited early ({self.proc.returncode}); see its log")
            try:
                with connect(self.env["ABCD_SOCKET"], timeout=0.5):
                    return self
            except DaemonUnavailable:
                time.sleep(0.05)
        raise SystemExit("the daemon did not answer in time")

    def cpu_ticks(self) -> int:
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)

    def status_kb(self, key: str) -> int:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        return 0

    def reset_peak(self) -> bool:
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as f:
                f.write("5")
            return True
        except OSError:
            return False

    def stop(self, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


class Spawner:
    """Start a process with stdin from a file and time it from spawn to exit."""

    def __init__(self, env: dict, stderr_log: Path) -> None:
        self.env = env
        self.stderr_log = str(stderr_log)

    def _actions(self, stdin_path: str):
        return [(os.POSIX_SPAWN_OPEN, 0, stdin_path, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, self.stderr_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)]

    def start(self, argv: list[str], stdin_path: str = os.devnull, *, search_path: bool = False) -> int:
        spawn = os.posix_spawnp if search_path else os.posix_spawn
        return spawn(argv[0], argv, self.env, file_actions=self._actions(stdin_path))

    def run(self, argv: list[str], stdin_path: str = os.devnull, *, search_path: bool = False) -> float:
        """Seconds from spawn to exit. Raises on a non-zero exit status."""
        t0 = time.perf_counter()
        pid = self.start(argv, stdin_path, search_path=search_path)
        _, status = os.waitpid(pid, 0)
        elapsed = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{argv} exited with {os.waitstatus_to_exitcode(status)}")
        return elapsed


# --------------------------------------------------------------------------- fixtures


@dataclass
class Agent:
    agent_id: str
    payload_path: str


@dataclass
class Setup:
    base: Path
    env: dict
    repo: Path
    sha: str
    session: str
    maker: c.TranscriptMaker
    project: Path
    n_agents: int = 0


def new_agent(s: Setup, nbytes: int) -> Agent:
    """A sub-agent transcript of ~nbytes and its SubagentStop payload file."""
    agent = s.maker.agent_id()
    tdir = s.project / s.session / "subagents"
    tdir.mkdir(parents=True, exist_ok=True)
    transcript = tdir / f"agent-{agent}.jsonl"
    transcript.write_bytes(s.maker.transcript(nbytes, session=s.session, agent=agent))
    payload = {"session_id": s.session, "cwd": str(s.repo), "hook_event_name": "SubagentStop",
               "transcript_path": str(s.project / f"{s.session}.jsonl"), "agent_id": agent,
               "agent_type": "general-purpose", "agent_transcript_path": str(transcript),
               "permission_mode": "acceptEdits", "stop_hook_active": False}
    path = s.base / "payloads" / f"{agent}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(payload))
    s.n_agents += 1
    return Agent(agent, str(path))


def records_dir(s: Setup) -> Path:
    return Path(s.env["ABCD_HOME"]) / "transcripts" / s.sha / "records"


def present_agents(s: Setup) -> set[str]:
    """Agent ids with a record file (by name: cheap enough to poll every few ms)."""
    try:
        names = os.listdir(records_dir(s))
    except FileNotFoundError:
        return set()
    return {n[n.rindex("-agent-") + 7:-3] for n in names if n.endswith(".md") and "-agent-" in n}


def spool_empty(s: Setup) -> bool:
    try:
        return not os.listdir(Path(s.env["ABCD_HOME"]) / "spool" / "new")
    except FileNotFoundError:
        return True


def wait_until(predicate, timeout: float, interval: float = 0.002) -> float:
    """Poll until true; return the perf_counter time it was first seen true."""
    deadline = time.perf_counter() + timeout
    while True:
        if predicate():
            return time.perf_counter()
        if time.perf_counter() > deadline:
            raise SystemExit(f"timed out after {timeout}s")
        time.sleep(interval)


# --------------------------------------------------------------------------- phases


def resolve_interpreters(env: dict) -> tuple[str, str]:
    """(python3 as PATH resolves it, the real interpreter it runs)."""
    on_path = shutil.which("python3", path=env.get("PATH"))
    if on_path is None:
        raise SystemExit("no python3 on PATH (the shim's shebang needs one)")
    real = subprocess.run([on_path, "-I", "-S", "-c", "import sys; print(sys.executable)"], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()
    return on_path, os.path.realpath(real)


def phase_shim(s: Setup, spawner: Spawner, runs: int, real: str) -> dict[str, list[float]]:
    """Interleave four commands per iteration (rotating their order)."""
    agent = new_agent(s, 8 * c.KB)
    cmds = {
        "shim": ([str(SHIM), "subagent-stop"], agent.payload_path, False),
        "bare": (["python3", "-I", "-S", "-c", "pass"], os.devnull, True),
        "real_shim": ([real, "-I", "-S", str(SHIM), "subagent-stop"], agent.payload_path, False),
        "real_bare": ([real, "-I", "-S", "-c", "pass"], os.devnull, False),
    }
    names = list(cmds)
    times: dict[str, list[float]] = {k: [] for k in names}
    for name in names:  # warm the page cache and the daemon's caches
        spawner.run(cmds[name][0], cmds[name][1], search_path=cmds[name][2])
    for i in range(runs):
        for name in names[i % 4:] + names[:i % 4]:
            wait_until(lambda: spool_empty(s), 30)
            time.sleep(0.01)
            argv, stdin, search = cmds[name]
            times[name].append(spawner.run(argv, stdin, search_path=search))
    return times


def phase_e2e(s: Setup, spawner: Spawner, n: int, nbytes: int) -> tuple[list[float], list[float]]:
    """(exit → record present, shim wall) for n payloads, one at a time."""
    agents = [new_agent(s, nbytes) for _ in range(n)]
    lat, shim = [], []
    for a in agents:
        wait_until(lambda: spool_empty(s), 30)
        time.sleep(0.2)  # let the daemon finish the previous item's bookkeeping
        shim.append(spawner.run([str(SHIM), "subagent-stop"], a.payload_path))
        exited = time.perf_counter()
        seen = wait_until(lambda: a.agent_id in present_agents(s), 60)
        lat.append(seen - exited)
    return lat, shim


class RssSampler(threading.Thread):
    def __init__(self, daemon: Daemon, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.d, self.interval, self.peak_kb = daemon, interval, 0
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            try:
                self.peak_kb = max(self.peak_kb, self.d.status_kb("VmRSS"))
            except OSError:
                return
            self.halt.wait(self.interval)


@dataclass
class Burst:
    n: int
    agents: list[str]
    all_stored_s: float = 0.0
    last_exit_s: float = 0.0
    shim_s: list[float] = field(default_factory=list)
    peak_rss_kb: int = 0
    hwm_kb: int = 0
    hwm_reset: bool = False


def phase_burst(s: Setup, spawner: Spawner, daemon: Daemon, n: int, nbytes: int) -> Burst:
    agents = [new_agent(s, nbytes) for _ in range(n)]
    os.sync()
    wait_until(lambda: spool_empty(s), 30)
    time.sleep(0.5)
    b = Burst(n=n, agents=[a.agent_id for a in agents], hwm_reset=daemon.reset_peak())
    sampler = RssSampler(daemon)
    sampler.start()
    t0 = time.perf_counter()
    started = {}
    for a in agents:
        started[spawner.start([str(SHIM), "subagent-stop"], a.payload_path)] = time.perf_counter()
    for _ in agents:
        pid, status = os.wait()
        b.shim_s.append(time.perf_counter() - started[pid])
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"a burst shim exited with {os.waitstatus_to_exitcode(status)}")
    b.last_exit_s = time.perf_counter() - t0
    want = set(b.agents)
    seen = wait_until(lambda: want <= present_agents(s), 600, interval=0.01)
    b.all_stored_s = seen - t0
    sampler.halt.set()
    sampler.join()
    b.peak_rss_kb, b.hwm_kb = sampler.peak_kb, daemon.status_kb("VmHWM")
    return b


def phase_idle(daemon: Daemon, seconds: float) -> float:
    """The daemon's CPU use over ``seconds`` of idleness, in percent of one core."""
    time.sleep(1.0)  # the last pass's status write, the last drain re-plan
    before, t0 = daemon.cpu_ticks(), time.perf_counter()
    time.sleep(seconds)
    ticks, elapsed = daemon.cpu_ticks() - before, time.perf_counter() - t0
    return 100.0 * ticks / CLK_TCK / elapsed


def verify(s: Setup, burst: Burst) -> dict:
    """Count the burst's records through the store's own listing, and what is left over."""
    from abcd_daemon.paths import Home
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.records import list_records

    lane = Lane(Home(s.env["ABCD_HOME"]), s.sha)
    records = list_records(lane)
    want = set(burst.agents)
    mine = [r for r in records if r.agent_id in want]
    keys = {(r.session_id, r.agent_id) for r in mine}
    home = Path(s.env["ABCD_HOME"])
    left = lambda p: len([n for n in os.listdir(p) if not n.startswith(".")]) if p.exists() else 0  # noqa: E731
    log = (home / "spool" / "shim.log").read_text().splitlines()
    return {
        "lost": len(want - {r.agent_id for r in mine}),
        "dupes": len(mine) - len(keys),
        "records_total": len(records),
        "expected_total": s.n_agents,
        "staged_left": left(lane.staging),
        "quarantined": left(lane.quarantine),
        "failed_payloads": len([n for n in os.listdir(home / "spool" / "failed") if n.endswith(".json")])
        if (home / "spool" / "failed").exists() else 0,
        "shim_runs_not_rang": sum(1 for line in log if not line.endswith("spooled+rang")),
        "shim_runs": len(log),
    }


# --------------------------------------------------------------------------- report


def ms(x: float) -> float:
    return round(x * 1e3, 2)


def build_result(shim: dict, e2e: list[float], burst: Burst, idle: float, check: dict,
                 on_path: str, real: str) -> dict:
    med = {k: c.median(v) for k, v in shim.items()}
    return {
        "shim_median_ms": ms(med["shim"]),
        "shim_p99_ms": ms(c.percentile(shim["shim"], 99)),
        "bare_python_median_ms": ms(med["bare"]),
        "shim_ratio": round(med["shim"] / med["bare"], 3),
        "e2e_median_s": round(c.median(e2e), 3),
        "burst_n": burst.n,
        "burst_lost": check["lost"],
        "burst_dupes": check["dupes"],
        "burst_all_stored_s": round(burst.all_stored_s, 2),
        "daemon_rss_mb": round(max(burst.peak_rss_kb, burst.hwm_kb) / 1024, 1),
        "idle_cpu_pct": round(idle, 3),
        "real_shim_median_ms": ms(med["real_shim"]),
        "real_shim_p99_ms": ms(c.percentile(shim["real_shim"], 99)),
        "real_bare_median_ms": ms(med["real_bare"]),
        "real_shim_ratio": round(med["real_shim"] / med["real_bare"], 3),
        "shim_runs": len(shim["shim"]),
        "e2e_p90_s": round(c.percentile(e2e, 90), 3),
        "burst_last_shim_exit_s": round(burst.last_exit_s, 2),
        "burst_shim_p99_ms": ms(c.percentile(burst.shim_s, 99)),
        "python3": on_path,
        "interpreter": real,
    }


def print_report(out: dict, shim: dict, e2e: list[float], e2e_shim: list[float], burst: Burst,
                 check: dict, idle_s: float) -> None:
    print(f"python3 on PATH: {out['python3']} -> real interpreter {out['interpreter']}")
    rows = []
    for name, label in (("shim", "shim file exec'd (shebang via PATH)"),
                        ("bare", "python3 -I -S -c pass (via PATH)"),
                        ("real_shim", "real python -I -S abcd-hook"),
                        ("real_bare", "real python -I -S -c pass")):
        v = shim[name]
        rows.append((label, len(v), ms(min(v)), ms(c.median(v)), ms(c.percentile(v, 90)),
                     ms(c.percentile(v, 99)), ms(max(v))))
    print(c.table(rows, ("process start to exit", "runs", "min ms", "p50 ms", "p90 ms", "p99 ms", "max ms")))
    print()
    print(c.table([
        ("e2e: shim exit -> record present", len(e2e), ms(min(e2e)), ms(c.median(e2e)),
         ms(c.percentile(e2e, 90)), ms(max(e2e))),
        ("e2e: shim wall (1 MB transcript)", len(e2e_shim), ms(min(e2e_shim)), ms(c.median(e2e_shim)),
         ms(c.percentile(e2e_shim, 90)), ms(max(e2e_shim))),
        (f"burst: shim wall ({burst.n} at once)", len(burst.shim_s), ms(min(burst.shim_s)),
         ms(c.median(burst.shim_s)), ms(c.percentile(burst.shim_s, 90)), ms(max(burst.shim_s))),
    ], ("", "n", "min ms", "p50 ms", "p90 ms", "max ms")))
    print()
    print(f"burst: last shim exited at {burst.last_exit_s:.2f} s, all {burst.n} stored at "
          f"{burst.all_stored_s:.2f} s; lost {check['lost']}, dupes {check['dupes']}; records "
          f"{check['records_total']}/{check['expected_total']}, staged left {check['staged_left']}, "
          f"quarantined {check['quarantined']}, failed payloads {check['failed_payloads']}, shim runs "
          f"not 'spooled+rang' {check['shim_runs_not_rang']}/{check['shim_runs']}")
    print(f"daemon: peak RSS {burst.peak_rss_kb / 1024:.1f} MB sampled, VmHWM {burst.hwm_kb / 1024:.1f} MB"
          f" ({'reset before the burst' if burst.hwm_reset else 'lifetime peak'}); "
          f"idle CPU over {idle_s:g} s {out['idle_cpu_pct']} %")
    print()
    v = lambda ok: "ok" if ok else "MISSED"  # noqa: E731
    print(c.table([
        ("shim_ratio", out["shim_ratio"], f"<= {TARGETS['shim_ratio']}", v(out["shim_ratio"] <= TARGETS["shim_ratio"])),
        ("shim_p99_ms / bare median", round(out["shim_p99_ms"] / out["bare_python_median_ms"], 2),
         f"<= {TARGETS['shim_p99_vs_bare']}",
         v(out["shim_p99_ms"] <= TARGETS["shim_p99_vs_bare"] * out["bare_python_median_ms"])),
        ("real_shim_ratio (info)", out["real_shim_ratio"], f"<= {TARGETS['shim_ratio']}",
         v(out["real_shim_ratio"] <= TARGETS["shim_ratio"])),
        ("real shim p99 / real bare median (info)", round(out["real_shim_p99_ms"] / out["real_bare_median_ms"], 2),
         f"<= {TARGETS['shim_p99_vs_bare']}",
         v(out["real_shim_p99_ms"] <= TARGETS["shim_p99_vs_bare"] * out["real_bare_median_ms"])),
        ("e2e_median_s", out["e2e_median_s"], f"<= {TARGETS['e2e_median_s']}", v(out["e2e_median_s"] <= TARGETS["e2e_median_s"])),
        ("burst_lost", out["burst_lost"], "= 0", v(out["burst_lost"] == 0)),
        ("burst_dupes", out["burst_dupes"], "= 0", v(out["burst_dupes"] == 0)),
        ("daemon_rss_mb", out["daemon_rss_mb"], f"<= {TARGETS['daemon_rss_mb']:g}", v(out["daemon_rss_mb"] <= TARGETS["daemon_rss_mb"])),
        ("idle_cpu_pct", out["idle_cpu_pct"], f"<= {TARGETS['idle_cpu_pct']}", v(out["idle_cpu_pct"] <= TARGETS["idle_cpu_pct"])),
    ], ("target", "value", "goal", "")))
    print()


# --------------------------------------------------------------------------- main


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shim-runs", type=int, default=200, help="timed runs of each command (default 200)")
    ap.add_argument("--e2e", type=int, default=20, help="single payloads for the e2e latency (default 20)")
    ap.add_argument("--burst", type=int, default=200, help="concurrent shims in the burst (default 200)")
    ap.add_argument("--transcript-kb", type=int, default=1000, help="e2e/burst transcript size (default 1000)")
    ap.add_argument("--idle-s", type=float, default=10.0, help="idle CPU window (default 10 s)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    base, env = c.isolated_env("abcd-bench-hooks-")
    c.apply_env(env)
    daemon = None
    try:
        repo = base / "repo"
        sha = c.make_repo(repo)
        maker = c.TranscriptMaker(args.seed, cwd=str(repo), home=os.environ.get("HOME", "/root"))
        s = Setup(base=base, env=env, repo=repo, sha=sha, session=maker.session_id(), maker=maker,
                  project=base / "projects" / "-bench-repo")
        on_path, real = resolve_interpreters(env)
        os.chdir(repo)  # the shim records its cwd; the harness runs hooks in the checkout
        spawner = Spawner(env, base / "shim-stderr.log")
        daemon = Daemon(env, base / "daemon.log").wait_ready()
        shim = phase_shim(s, spawner, args.shim_runs, real)
        e2e, e2e_shim = phase_e2e(s, spawner, args.e2e, args.transcript_kb * c.KB)
        burst = phase_burst(s, spawner, daemon, args.burst, args.transcript_kb * c.KB)
        idle = phase_idle(daemon, args.idle_s)
        check = verify(s, burst)
        rc = daemon.stop()
        daemon = None
        stderr_bytes = (base / "shim-stderr.log").stat().st_size if (base / "shim-stderr.log").exists() else 0
        out = build_result(shim, e2e, burst, idle, check, on_path, real)
        out["daemon_exit"] = rc
        out["shim_stderr_bytes"] = stderr_bytes
        print_report(out, shim, e2e, e2e_shim, burst, check, args.idle_s)
        if rc != 0 or stderr_bytes:
            print(f"WARNING: daemon exit {rc}; shim stderr {stderr_bytes} bytes (see {base})")
    finally:
        if daemon is not None:
            daemon.stop()
        os.chdir(c.ROOT)
        if args.keep:
            print(f"kept {base}")
        else:
            c.cleanup(base)
    c.emit_json(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
