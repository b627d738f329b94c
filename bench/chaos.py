"""Chaos: a real daemon under a stream of real shim invocations, killed with SIGKILL at
random instants and restarted; at the end every payload is exactly one record.

What is run:

- a fresh temporary ABCD_HOME / ABCD_SOCKET / TMPDIR and a real git repository;
- ``--payloads`` seeded Claude-Code-shaped transcripts (``_common.TranscriptMaker``),
  sizes log-uniform in [``--min-kb``, ``--max-mb``]: sessions of one main thread
  (a SessionEnd payload) and many sub-agents with distinct agent ids (SubagentStop);
- a feeder thread hands every payload to the real shim (``hooks/abcd-hook``), a few at
  a time, paced over ``--feed-s`` seconds, whether the daemon is up or not;
- meanwhile a real daemon (``python -m abcd_client daemon run``) is started and killed
  with SIGKILL ``--kills`` times, on a seeded schedule: most kills land a random delay
  after the daemon answers (intake, redaction, record writes under way), some during
  its start-up (the sweep, the lock, the bind). After every kill the store is audited
  while nothing of abcd runs;
- then a daemon catches up and is stopped with SIGTERM, and one more is started and
  stopped (the "next start"), after which the store is audited a last time.

What is measured (the JSON last line):

- ``lost``: payloads with no record and no explained quarantine (a ``.raw`` in
  quarantine/ with its reason file) — which includes payloads intake refused into
  spool/failed — plus payloads left in spool/new and shim runs that logged ``lost``;
- ``dupes``: records beyond the first for one (session, agent);
- ``partial_files``: distinct files seen, at any audit, that a reader would take for
  something they are not: a record that does not parse (``parse_record``), whose
  ``source_sha256`` is not the source transcript's, whose body has not as many lines as
  the source or holds a line that is not JSON; a staged or quarantined ``.raw`` whose
  bytes are not exactly a source transcript's; a sidecar, quarantine reason,
  status.json or spooled payload that does not decode; a file nobody should have
  written;
- ``leftover_tmp``: ``.abcd-tmp-*`` files anywhere under ABCD_HOME and files in
  spool/tmp after the final clean start.

The table also shows each kill (when, what was under way) and diagnostics: temp files
seen at kill time (expected; the next start sweeps them), orphan staging sidecars.
Exits 1 when any count is non-zero, a hook run exited non-zero or wrote to stdout, or
fewer kills than asked happened.

    .venv/bin/python bench/chaos.py [--payloads 300] [--kills 20] [--seed 7] [--keep]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as c  # noqa: E402

SHIM = c.ROOT / "hooks" / "abcd-hook"
TEMP_PREFIX = ".abcd-tmp-"
#: Share of kills aimed at the daemon's start-up rather than its running state.
STARTUP_KILL_SHARE = 0.2


# --------------------------------------------------------------------------- corpus


@dataclasses.dataclass(frozen=True)
class Payload:
    """One hook payload and the transcript it names."""

    session: str
    agent: str  # "" for a main thread (SessionEnd)
    event: str
    body: bytes  # the JSON the harness would pipe to the hook
    source: Path
    sha256: str
    lines: int
    size: int

    @property
    def key(self) -> tuple[str, str]:
        return (self.session, self.agent)


def log_uniform_sizes(rng: random.Random, n: int, lo: int, hi: int) -> list[int]:
    """``n`` sizes log-uniform in [lo, hi], with both ends present when n >= 2."""
    sizes = [int(math.exp(rng.uniform(math.log(lo), math.log(hi)))) for _ in range(n)]
    if n >= 2:
        sizes[0], sizes[1] = lo, hi
        rng.shuffle(sizes)
    return sizes


def build_corpus(base: Path, repo: Path, *, n: int, seed: int, lo: int, hi: int) -> list[Payload]:
    """Write ``n`` transcripts in the Claude Code layout; return their payloads in a
    seeded arrival order. One session per ~15 transcripts: a main thread + agents."""
    maker = c.TranscriptMaker(seed, cwd=str(repo), home=os.environ.get("HOME", "/root"))
    rng = random.Random(seed + 1)
    sizes = log_uniform_sizes(rng, n, lo, hi)
    sessions = [maker.session_id() for _ in range(max(1, n // 15))]
    project = base / "projects" / "-chaos-repo"
    out = []
    for i, size in enumerate(sizes):
        session = sessions[i % len(sessions)]
        main = i < len(sessions)
        agent = "" if main else maker.agent_id()
        path = (project / f"{session}.jsonl" if main
                else project / session / "subagents" / f"agent-{agent}.jsonl")
        raw = maker.transcript(size, session=session, agent=agent)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
        out.append(Payload(session=session, agent=agent,
                           event="session-end" if main else "subagent-stop",
                           body=_payload_json(session, agent, path, project, repo), source=path,
                           sha256=hashlib.sha256(raw).hexdigest(), lines=raw.count(b"\n"),
                           size=len(raw)))
    rng.shuffle(out)
    return out


def _payload_json(session: str, agent: str, path: Path, project: Path, repo: Path) -> bytes:
    body = {"session_id": session, "cwd": str(repo),
            "transcript_path": str(project / f"{session}.jsonl")}
    if agent:
        body.update(hook_event_name="SubagentStop", agent_id=agent, agent_type="general-purpose",
                    agent_transcript_path=str(path))
    else:
        body.update(hook_event_name="SessionEnd", reason="exit")
    return json.dumps(body).encode()


# --------------------------------------------------------------------------- processes


class Daemon:
    """One daemon process (``abcd daemon run -v``), logging to ``log``."""

    def __init__(self, env: dict, log: Path) -> None:
        self.env = env
        self.log = open(log, "ab")
        self.started = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "abcd_client", "daemon", "run", "-v"],
                                     env=env, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=self.log, cwd=c.ROOT)

    def answers(self) -> bool:
        """The daemon completes the protocol handshake. (A bare connect is not enough:
        the socket listens a moment before the daemon handles SIGTERM.)"""
        from abcd_client.connect import connect
        from abcd_daemon.errors import DaemonUnavailable

        try:
            with connect(self.env["ABCD_SOCKET"], timeout=0.5):
                return True
        except DaemonUnavailable:
            return False

    def wait_ready(self, timeout: float = 30.0) -> float:
        """Seconds from spawn until the socket accepts."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"the daemon exited early ({self.proc.returncode}); see its log")
            if self.answers():
                return time.monotonic() - self.started
            time.sleep(0.01)
        raise SystemExit("the daemon did not answer in time")

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def stop(self, timeout: float = 60.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return -9
        self.log.close()
        return self.proc.returncode


class Feeder(threading.Thread):
    """Hands every payload to the real shim, ``workers`` at a time, paced so the last
    one goes out about ``seconds`` after the start."""

    def __init__(self, payloads: list[Payload], env: dict, cwd: Path, *, seconds: float,
                 workers: int, seed: int) -> None:
        super().__init__(daemon=True)
        self.payloads, self.env, self.cwd = payloads, env, cwd
        self.seconds, self.workers = seconds, workers
        self.rng = random.Random(seed)
        self.failures: list[str] = []
        self.sent = 0

    def run(self) -> None:
        gaps = [self.rng.expovariate(1.0) for _ in self.payloads]
        scale = self.seconds / max(sum(gaps), 1e-9)
        with ThreadPoolExecutor(self.workers) as pool:
            futures = []
            for payload, gap in zip(self.payloads, gaps):
                time.sleep(gap * scale)
                futures.append(pool.submit(self._one, payload))
            for f in futures:
                f.result()

    def _one(self, payload: Payload) -> None:
        res = subprocess.run([str(SHIM), payload.event], input=payload.body, env=self.env,
                             capture_output=True, timeout=30, cwd=self.cwd)
        self.sent += 1
        if res.returncode != 0 or res.stdout:
            self.failures.append(f"{payload.key}: exit {res.returncode}, stdout {res.stdout[:80]!r}")


# --------------------------------------------------------------------------- audit


@dataclasses.dataclass
class Audit:
    """What one look at the store found."""

    partial: dict[str, str] = dataclasses.field(default_factory=dict)  # path -> why
    temp: list[str] = dataclasses.field(default_factory=list)
    orphan_sidecars: list[str] = dataclasses.field(default_factory=list)
    records: int = 0
    staged: int = 0
    quarantined: int = 0
    spooled: int = 0


class Auditor:
    """Checks every file under ABCD_HOME against the corpus. Records are immutable,
    so a record verified once (same name, size, mtime) is not read again."""

    def __init__(self, home: Path, sha: str, payloads: list[Payload]) -> None:
        self.home, self.sha = home, sha
        self.by_key = {p.key: p for p in payloads}
        self.by_sha = {p.sha256 for p in payloads}
        self.verified: set[tuple[str, int, int]] = set()
        self.partial_ever: dict[str, str] = {}

    @property
    def lane(self) -> Path:
        return self.home / "transcripts" / self.sha

    def audit(self) -> Audit:
        out = Audit()
        for directory, _, files in os.walk(self.home):
            for name in files:
                path = Path(directory) / name
                if name.startswith(TEMP_PREFIX):
                    out.temp.append(str(path.relative_to(self.home)))
                    continue
                why = self._check(path, out)
                if why:
                    rel = str(path.relative_to(self.home))
                    out.partial[rel] = why
                    self.partial_ever.setdefault(rel, why)
        return out

    def _check(self, path: Path, out: Audit) -> str:
        """Why ``path`` is partial or stray ("" when it is whole)."""
        rel = path.relative_to(self.home).parts
        try:
            if rel[0] == "spool":
                return self._spool_file(path, rel, out)
            if rel == ("status.json",):
                return _json_error(path.read_bytes())
            if rel[0] != "transcripts" or len(rel) < 3 or rel[1] != self.sha:
                return "" if rel[-1] == "daemon.log" else "a file nobody should have written"
            area = rel[2]
            if area == "records":
                return "" if rel[-1] == ".lock" else self._record(path, out)
            if area == "staging":
                return self._staged(path, rel, out)
            if area == "quarantine":
                return self._quarantined(path, out)
            if area == "sessions" or rel[-1] in ("repository.json", "subagent-payload-gap.json"):
                return "" if area == "sessions" else _json_error(path.read_bytes())
            return "a file nobody should have written"
        except FileNotFoundError:
            return ""  # renamed or removed while listed (only between audits' own steps)

    def _spool_file(self, path: Path, rel: tuple, out: Audit) -> str:
        if rel[-1] == "shim.log":
            return ""
        if len(rel) == 3 and rel[1] == "tmp":
            return ""  # a shim mid-write; counted as leftover only after the final start
        if rel[-1].endswith(".reason"):
            return ""
        if rel[1] == "new":
            out.spooled += 1
        head, _, body = path.read_bytes().partition(b"\n")
        return _json_error(head) or _json_error(body)

    def _record(self, path: Path, out: Audit) -> str:
        from abcd_daemon.store.record import RecordFormatError, parse_record

        out.records += 1
        st = path.stat()
        ident = (path.name, st.st_size, st.st_mtime_ns)
        if ident in self.verified:
            return ""
        try:
            record, body = parse_record(path.read_bytes(), path.name)
        except RecordFormatError as exc:
            return f"record does not parse: {exc}"
        source = self.by_key.get((record.session_id, record.agent_id))
        if source is None:
            return "record of no payload"
        if record.source_sha256 != source.sha256:
            return "record's source_sha256 is not its transcript's (captured from partial bytes)"
        lines = body.count(b"\n")
        if lines != source.lines:
            return f"record body has {lines} lines, its transcript {source.lines}"
        bad = next((i for i, line in enumerate(body.splitlines()) if _json_error(line)), None)
        if bad is not None:
            return f"record body line {bad + 1} is not JSON"
        self.verified.add(ident)
        return ""

    def _staged(self, path: Path, rel: tuple, out: Audit) -> str:
        name = rel[-1]
        if ".locks" in rel:
            return ""
        if name.endswith(".raw"):
            out.staged += 1
            return self._raw(path)
        if name.endswith(".stage.json"):
            if not path.with_name(name[: -len(".stage.json")] + ".raw").exists():
                out.orphan_sidecars.append(str(path.relative_to(self.home)))
            return _json_error(path.read_bytes())
        return "a file nobody should have written"

    def _quarantined(self, path: Path, out: Audit) -> str:
        if path.name.endswith(".raw"):
            out.quarantined += 1
            return self._raw(path)
        return _json_error(path.read_bytes())

    def _raw(self, path: Path) -> str:
        if hashlib.sha256(path.read_bytes()).hexdigest() not in self.by_sha:
            return "raw bytes are not exactly any source transcript's"
        return ""


def _json_error(data: bytes) -> str:
    import msgspec

    try:
        msgspec.json.decode(data)
        return ""
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        return f"not JSON ({str(exc)[:60]})"


# --------------------------------------------------------------------------- accounting


@dataclasses.dataclass
class Accounts:
    stored: int
    quarantined: int
    lost: list[str]
    dupes: list[str]
    failed: list[str]
    pending: int
    reasons: list[str]


def account(home: Path, sha: str, payloads: list[Payload]) -> Accounts:
    """Every payload against what the store holds for its (session, agent)."""
    from abcd_daemon.paths import Home
    from abcd_daemon.queue.staged import list_quarantined
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.records import list_records

    lane = Lane(Home(home), sha)
    counts: dict[tuple[str, str], int] = {}
    for record in list_records(lane):
        key = (record.session_id, record.agent_id)
        counts[key] = counts.get(key, 0) + 1
    explained = {(q.session_id, q.agent_id): q.reason for q in list_quarantined(lane)
                 if q.reason and not q.error}
    failed_dir = home / "spool" / "failed"
    failed = sorted(p.read_text(errors="replace").strip()
                    for p in failed_dir.glob("*.reason")) if failed_dir.exists() else []
    spool_new = home / "spool" / "new"
    pending = len(list(spool_new.glob("*.json"))) if spool_new.exists() else 0
    lost = [f"{p.key}" for p in payloads if counts.get(p.key, 0) == 0 and p.key not in explained]
    dupes = [f"{key} x{n}" for key, n in counts.items() if n > 1]
    return Accounts(stored=sum(1 for p in payloads if counts.get(p.key)), quarantined=len(explained),
                    lost=lost, dupes=dupes, failed=failed, pending=pending,
                    reasons=sorted(set(explained.values())))


def leftovers(home: Path) -> list[str]:
    """Temp files anywhere under the home, and anything in spool/tmp."""
    found = []
    for directory, _, files in os.walk(home):
        for name in files:
            path = Path(directory) / name
            if name.startswith(TEMP_PREFIX) or path.parent == home / "spool" / "tmp":
                found.append(str(path.relative_to(home)))
    return found


# --------------------------------------------------------------------------- the run


@dataclasses.dataclass
class Kill:
    n: int
    mode: str  # "startup" | "running"
    delay_s: float
    ready_s: float
    records: int
    staged: int
    spooled: int
    temp: int
    partial: int


def kill_schedule(rng: random.Random, kills: int) -> list[tuple[str, float]]:
    """Seeded (mode, delay): ``startup`` kills fire a delay after spawn (0–0.3 s),
    ``running`` kills a delay after the daemon answers (0–2.5 s)."""
    plan = []
    for _ in range(kills):
        if rng.random() < STARTUP_KILL_SHARE:
            plan.append(("startup", rng.uniform(0.0, 0.3)))
        else:
            plan.append(("running", rng.uniform(0.0, 2.5)))
    return plan


def one_cycle(n: int, mode: str, delay: float, env: dict, logs: Path, auditor: Auditor) -> Kill:
    """Start a daemon, SIGKILL it at the scheduled instant, audit the store."""
    daemon = Daemon(env, logs / f"daemon-{n:02d}.log")
    ready = 0.0
    if mode == "running":
        ready = daemon.wait_ready()
    time.sleep(delay)
    daemon.kill9()
    found = auditor.audit()
    return Kill(n=n, mode=mode, delay_s=delay, ready_s=ready, records=found.records,
                staged=found.staged, spooled=found.spooled, temp=len(found.temp),
                partial=len(found.partial))


def settled(home: Path, sha: str, payloads: list[Payload], feeder: Feeder) -> bool:
    acc = account(home, sha, payloads)
    lane = home / "transcripts" / sha / "staging"
    staged = list(lane.glob("*.raw")) if lane.exists() else []
    return (not feeder.is_alive() and acc.pending == 0 and not staged
            and len(acc.lost) <= len(acc.failed))


def catch_up(env: dict, logs: Path, home: Path, sha: str, payloads: list[Payload], feeder: Feeder,
             timeout: float) -> int:
    """A daemon runs until everything is stored, then stops with SIGTERM."""
    daemon = Daemon(env, logs / "daemon-catch-up.log")
    daemon.wait_ready()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not settled(home, sha, payloads, feeder):
        time.sleep(0.2)
    return daemon.stop()


def next_start(env: dict, logs: Path) -> int:
    """The next start after a clean stop: it sweeps at start-up; stop it cleanly."""
    daemon = Daemon(env, logs / "daemon-next-start.log")
    daemon.wait_ready()
    return daemon.stop()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--payloads", type=int, default=300)
    p.add_argument("--kills", type=int, default=20)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--min-kb", type=float, default=10)
    p.add_argument("--max-mb", type=float, default=5)
    p.add_argument("--feed-s", type=float, default=25.0, help="spread the shim runs over this long")
    p.add_argument("--workers", type=int, default=4, help="shims running at once")
    p.add_argument("--catch-up-s", type=float, default=300.0)
    p.add_argument("--base-dir", default=None, help="where the temporary tree goes")
    p.add_argument("--keep", action="store_true", help="keep the temporary tree")
    return p.parse_args(argv)


def run(args, base: Path, env: dict) -> tuple[dict, list[str]]:
    """The whole scenario; returns (the JSON result, hook runs that broke the contract)."""
    home = Path(env["ABCD_HOME"])
    logs = base / "logs"
    logs.mkdir()
    repo = base / "repo"
    sha = c.make_repo(repo)
    t0 = time.monotonic()
    payloads = build_corpus(base, repo, n=args.payloads, seed=args.seed,
                            lo=int(args.min_kb * c.KB), hi=int(args.max_mb * c.MB))
    print(f"corpus: {len(payloads)} transcripts, {sum(p.size for p in payloads) / c.MB:.1f} MB, "
          f"{min(p.size for p in payloads) / c.KB:.0f} KB – {max(p.size for p in payloads) / c.MB:.2f} MB "
          f"({time.monotonic() - t0:.1f} s)")
    auditor = Auditor(home, sha, payloads)
    feeder = Feeder(payloads, env, repo, seconds=args.feed_s, workers=args.workers, seed=args.seed + 2)
    schedule = kill_schedule(random.Random(args.seed + 3), args.kills)
    t_chaos = time.monotonic()
    feeder.start()
    kills = [one_cycle(i + 1, mode, delay, env, logs, auditor) for i, (mode, delay) in enumerate(schedule)]
    chaos_s = time.monotonic() - t_chaos
    catch_rc = catch_up(env, logs, home, sha, payloads, feeder, args.catch_up_s)
    feeder.join()
    final = auditor.audit()
    next_rc = next_start(env, logs)
    tmp_left = leftovers(home)
    final = auditor.audit()
    acc = account(home, sha, payloads)
    report(kills, acc, auditor, final, tmp_left, feeder, catch_rc, next_rc, chaos_s)
    lost = len(acc.lost) + acc.pending + shim_lost(home)
    return {"payloads": len(payloads), "kills": len(kills), "lost": lost, "dupes": len(acc.dupes),
            "partial_files": len(auditor.partial_ever), "leftover_tmp": len(tmp_left)}, feeder.failures


def shim_lost(home: Path) -> int:
    """Shim runs that say they could not spool their payload anywhere (shim.log)."""
    log = home / "spool" / "shim.log"
    return sum(" lost: " in line for line in log.read_text().splitlines()) if log.exists() else 0


def report(kills: list[Kill], acc: Accounts, auditor: Auditor, final: Audit, tmp_left: list[str],
           feeder: Feeder, catch_rc: int, next_rc: int, chaos_s: float) -> None:
    rows = [(k.n, k.mode, f"{k.delay_s:.2f}", f"{k.ready_s:.2f}" if k.ready_s else "-", k.records,
             k.staged, k.spooled, k.temp, k.partial) for k in kills]
    print(c.table(rows, ("kill", "when", "delay s", "ready s", "records", "staged", "spooled",
                         "tmp seen", "partial")))
    print()
    summary = [
        ("chaos phase", f"{chaos_s:.1f} s, {len(kills)} SIGKILLs"),
        ("shim runs", f"{feeder.sent} ({len(feeder.failures)} not exit 0 / wrote stdout)"),
        ("stored", f"{acc.stored} payloads as records"),
        ("quarantined", f"{acc.quarantined} (explained: {'; '.join(acc.reasons) or '-'})"),
        ("spool/failed", f"{len(acc.failed)} {acc.failed[:3] if acc.failed else ''}"),
        ("spool/new left", str(acc.pending)),
        ("lost", f"{len(acc.lost)} {acc.lost[:5] if acc.lost else ''}"),
        ("dupes", f"{len(acc.dupes)} {acc.dupes[:5] if acc.dupes else ''}"),
        ("partial files", str(len(auditor.partial_ever))),
        ("orphan sidecars", f"{len(final.orphan_sidecars)} (staging .stage.json with no .raw)"),
        ("leftover tmp", f"{len(tmp_left)} {tmp_left[:5] if tmp_left else ''}"),
        ("daemon exits", f"catch-up {catch_rc}, next start {next_rc} (SIGTERM: 0 expected)"),
    ]
    width = max(len(k) for k, _ in summary)
    for k, v in summary:
        print(f"{k.ljust(width)}  {v}")
    for rel, why in sorted(auditor.partial_ever.items())[:20]:
        print(f"PARTIAL {rel}: {why}")
    if final.orphan_sidecars:
        print(f"WARNING: {len(final.orphan_sidecars)} staging sidecar(s) outlived their entry: a kill "
              "between stage()'s sidecar write and its .raw write leaves the sidecar, and the "
              "re-take stages under a new stamp, so nothing ever lists, drains, discards or "
              "sweeps it (abcd_daemon/queue/stage.py). Not a partial file (it parses), but a "
              "leftover: " + ", ".join(final.orphan_sidecars[:3]))


def main(argv=None) -> int:
    args = parse_args(argv)
    base, env = c.isolated_env("abcd-chaos-", args.base_dir)
    c.apply_env(env)
    try:
        out, hook_failures = run(args, base, env)
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            c.cleanup(base)
    c.emit_json(out)
    bad = any(out[k] for k in ("lost", "dupes", "partial_files", "leftover_tmp"))
    return 1 if bad or hook_failures or out["kills"] != args.kills else 0


if __name__ == "__main__":
    sys.exit(main())
