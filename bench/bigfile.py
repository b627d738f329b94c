"""Benchmark: capturing one very large transcript through the real hook → daemon path.

What is measured (issue 16):
1. Baseline, in this process: today's in-memory pipeline before streaming — the whole
   10 MB transcript read into memory, framed, one ``redact_text`` over all of it, the
   record formatted and written atomically — in MB/s; measured before the big capture
   and again after it (the machine is shared: the ratio is against their mean).
2. The same 10 MB through the streaming capture (``capture_file``), in this process.
3. A seeded synthetic transcript of ``--mib`` MiB (Claude-Code-shaped lines from
   ``bench/_common.TranscriptMaker``) carrying one line of ``--long-line-mib`` MiB (a
   pasted file in a tool result), handed to a real daemon by the real hook shim
   (``hooks/abcd-hook session-end``): from the hook's start until the record is listed.
   The daemon's peak RSS is its ``VmHWM`` (and a 50 ms sampler); capture MB/s is the
   transcript's size over that wall time (intake copy, settle, drain, redaction, write).
   Then the daemon indexes the new record for search: its peak over that
   (``daemon_index_rss_mb``) and its lowest RSS within 60 s after (``daemon_after_mb``,
   beside ``daemon_idle_mb``).
4. Reconstruct of that session, ``--mode spine`` then ``full`` (per-block cap on, the
   default), by the CLI with the daemon stopped (the core in-process): each run's peak
   RSS (its own ``VmHWM``, written at exit) and MB/s of record bytes — or, when it refuses or writes
   an artefact without the record (telemetry's ``dropped_records``), why.
5. ``--kills N``: the same hand-over of a ``--kill-mib`` transcript, the daemon killed
   with SIGKILL at N random instants during capture and restarted each time; after
   each kill no record file may be partial (every ``*.md`` parses and holds the whole
   body), nothing may be lost (the entry is still staged or stored), and at the end
   the transcript is stored exactly once.

Targets: daemon peak RSS <= 400 MB for the big capture; capture >= 0.8x the in-memory
MB/s; reconstruct peak RSS <= 400 MB at >= 40 MB/s; partial_records = lost = 0. The last
stdout line is one JSON object with every field the issue names (``gib``,
``capture_rss_mb``, ``capture_vs_inmemory``, ``reconstruct_rss_mb``,
``reconstruct_mb_per_s``, ``kills``, ``partial_records``, ``lost``), the load average
it ran under (``uptime``) and ``targets_met``.

    .venv/bin/python bench/bigfile.py [--mib 1024] [--long-line-mib 64] [--kills 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as c  # noqa: E402
from hooks import Daemon  # noqa: E402

PYTHON = Path(sys.executable)
SHIM = c.ROOT / "hooks" / "abcd-hook"
TARGETS = {"capture_rss_mb": 400.0, "capture_vs_inmemory": 0.8, "reconstruct_rss_mb": 400.0,
           "reconstruct_mb_per_s": 40.0}


def write_transcript(path: Path, maker, session: str, mib: int, long_line_mib: int) -> tuple[int, int]:
    """Write ~``mib`` MiB of transcript with one ``long_line_mib`` MiB line in the middle,
    in pieces (the bench never holds the file either). Returns (bytes, lines)."""
    target = mib * c.MIB
    piece = 8 * c.MIB
    size = lines = 0
    long_at = target // 2
    with open(path, "wb") as f:
        while size < target:
            data = maker.transcript(min(piece, target - size), session=session)
            f.write(data)
            size += len(data)
            lines += data.count(b"\n")
            if long_line_mib and long_at and size >= long_at:
                long_at = 0
                text = maker._block_text(long_line_mib * c.MIB)
                line = json.dumps({"type": "user", "sessionId": session, "uuid": maker._uuid(),
                                   "message": {"role": "user", "content": [
                                       {"type": "tool_result", "tool_use_id": "toolu_big",
                                        "content": text}]}}, separators=(",", ":")).encode() + b"\n"
                f.write(line)
                size += len(line)
                lines += 1
    return size, lines


def baseline_inmemory(lane, raw: bytes, scanner, config) -> float:
    """Today's pipeline before streaming: whole bytes in, one redact_text, one write."""
    import hashlib

    from abcd_daemon.fsio.atomic import atomic_write
    from abcd_daemon.scanner import redact_text
    from abcd_daemon.store.capture import frame, unframe
    from abcd_daemon.store.meta import CaptureMeta
    from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns

    t0 = time.perf_counter()
    meta = CaptureMeta(session_id="baseline")
    sha = hashlib.sha256(raw).hexdigest()
    text = frame(meta, raw)
    red = redact_text(scanner, text, deadline=time.monotonic() + config.scan_deadline(len(text)))
    scalars, body = unframe(red.text)
    record = Record(session_id="baseline", root_commit=lane.root_sha, source_sha256=sha,
                    captured_at=format_rfc3339_ns(time.time_ns()), **scalars)
    lane.ensure("records")
    atomic_write(lane.records / "baseline.md", format_record(record, body))
    return len(raw) / c.MB / (time.perf_counter() - t0)


def streaming_inprocess(lane, path: Path, scanner, config) -> float:
    from abcd_daemon.store.capture import capture_file
    from abcd_daemon.store.meta import CaptureMeta

    t0 = time.perf_counter()
    capture_file(lane, path, CaptureMeta(session_id="streamed"), scanner=scanner, config=config,
                 now_ns=time.time_ns())
    return path.stat().st_size / c.MB / (time.perf_counter() - t0)


class Sampler(threading.Thread):
    def __init__(self, daemon: Daemon) -> None:
        super().__init__(daemon=True)
        self.d, self.peak_kb, self.stop = daemon, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.peak_kb = max(self.peak_kb, self.d.status_kb("VmRSS"))
            except OSError:
                return
            time.sleep(0.05)


def hand_over(env: dict, repo: Path, session: str, transcript: Path) -> None:
    payload = {"session_id": session, "cwd": str(repo), "hook_event_name": "SessionEnd",
               "transcript_path": str(transcript), "reason": "exit"}
    res = subprocess.run([str(PYTHON), "-I", "-S", str(SHIM), "session-end"], env=env, cwd=repo,
                         input=json.dumps(payload).encode(), capture_output=True, timeout=30)
    c.check(res.returncode == 0, f"the hook exited {res.returncode}")


def records_of(home, sha: str, session: str):
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.records import list_records

    return [r for r in list_records(Lane(home, sha)) if r.session_id == session]


def wait_stored(home, sha, session, daemon: Daemon, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = records_of(home, sha, session)
        if found:
            return found
        if daemon.proc.poll() is not None:
            raise SystemExit(f"the daemon exited ({daemon.proc.returncode}); see its log")
        time.sleep(0.1)
    raise SystemExit(f"not stored within {timeout:.0f}s")


def wait_indexed(home, session: str, daemon: Daemon, timeout: float) -> bool:
    """Wait until the search index holds a record of ``session``; False at the timeout."""
    import sqlite3

    from abcd_daemon.index.db import index_path

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and daemon.proc.poll() is None:
        try:
            conn = sqlite3.connect(f"file:{index_path(home)}?mode=ro", uri=True, timeout=1)
            try:
                if conn.execute("SELECT count(*) FROM records WHERE session_id = ?",
                                (session,)).fetchone()[0]:
                    return True
            finally:
                conn.close()
        except sqlite3.Error:
            pass
        time.sleep(0.5)
    return False


def partial_records(home, sha: str) -> int:
    """Record files that do not parse, or whose body is not whole (ends without \\n)."""
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.record import RecordFormatError
    from abcd_daemon.store.records import open_body, read_header

    lane = Lane(home, sha)
    bad = 0
    for name in os.listdir(lane.records) if lane.records.exists() else []:
        if not name.endswith(".md") or name.startswith("."):
            continue
        try:
            record = read_header(lane.records / name)
            f, n = open_body(lane, record)
            with f:
                f.seek(max(0, f.tell() + n - 1))
                if n == 0 or f.read(1) != b"\n":
                    bad += 1
        except (RecordFormatError, OSError, Exception):
            bad += 1
    return bad


def still_held(home, sha: str, session: str) -> bool:
    """The transcript is somewhere abcd keeps it: spooled, staged, failed or stored."""
    from abcd_daemon.queue.staged import list_staged
    from abcd_daemon.store.lane import Lane

    lane = Lane(home, sha)
    if records_of(home, sha, session):
        return True
    if any(e.session_id == session for e in list_staged(lane, now_ns=time.time_ns(), ttl_s=1e9)):
        return True
    return bool(os.listdir(home.root / "spool" / "new")) or bool(
        list((home.root / "spool" / "failed").glob("*.json")) if (home.root / "spool" / "failed").exists() else [])


def run_kills(env, base: Path, repo: Path, sha: str, maker, kills: int, mib: int, rng) -> dict:
    from abcd_daemon.paths import Home

    home = Home(env["ABCD_HOME"])
    session = maker.session_id()
    path = base / "kill.jsonl"
    write_transcript(path, maker, session, mib, 0)
    daemon = Daemon(env, base / "kill-daemon.log").wait_ready()
    hand_over(env, repo, session, path)
    partial = lost = done = 0
    try:
        for _ in range(kills):
            time.sleep(rng.uniform(0.2, 3.0))
            if records_of(home, sha, session):
                break
            daemon.proc.kill()
            daemon.proc.wait()
            daemon.log.close()
            done += 1
            partial += partial_records(home, sha)
            lost += 0 if still_held(home, sha, session) else 1
            daemon = Daemon(env, base / "kill-daemon.log").wait_ready()
        stored = wait_stored(home, sha, session, daemon, timeout=1800)
    finally:
        daemon.stop()
    return {"kills": done, "partial_records": partial, "lost": lost, "stored_times": len(stored)}


def scanner_again(config, repo: Path):
    from abcd_daemon.queue.scanners import ScannerPool

    return ScannerPool(config).get(str(repo))


#: Runs ``abcd`` and, at exit, writes its own VmHWM (kB) to argv[1]. The child's
#: ``ru_maxrss`` would not do: Linux carries the forking parent's peak into it at exec.
_HWM_WRAPPER = """
import atexit, runpy, sys
out = sys.argv.pop(1)
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            open(out, "w").write(line.split()[1])
atexit.register(hwm)
sys.argv[0] = "abcd"
runpy.run_module("abcd_client", run_name="__main__", alter_sys=True)
"""


def reconstruct_once(env: dict, repo: Path, session: str, mode: str, out_dir: Path,
                     record_bytes: int) -> dict:
    """``abcd history reconstruct`` of ``session`` with no daemon running (the CLI runs
    the core in-process), per-block cap on (the default): its peak RSS (the child's
    ``ru_maxrss``), MB/s of record bytes, and — when it refuses — why."""
    out_dir.mkdir(exist_ok=True)
    err_path = out_dir / f"{mode}.stderr"
    hwm_path = out_dir / f"{mode}.hwm"
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as devnull, open(err_path, "wb") as err:
        res = subprocess.run([str(PYTHON), "-c", _HWM_WRAPPER, str(hwm_path), "history", "reconstruct",
                              session, "--mode", mode, "--out", str(out_dir), "--json"], env=env,
                             cwd=repo, stdout=devnull, stderr=err, timeout=4 * 3600)
    wall = time.perf_counter() - t0
    out = {"mode": mode, "exit": res.returncode, "seconds": round(wall, 1),
           "rss_mb": round(int(hwm_path.read_text()) / 1024, 1)}
    proc = res
    dropped = _dropped(out_dir / f"{session}.telemetry.json")
    if proc.returncode == 0 and not dropped:
        out["mb_per_s"] = round(record_bytes / c.MB / wall, 2)
    elif dropped:  # written, but without the record: not a reconstruct of it
        out["refused"] = "the record was dropped: " + dropped[:300]
    else:
        lines = err_path.read_text(errors="replace").strip().splitlines() or ["?"]
        out["refused"] = lines[0][:300]
    return out


def _dropped(telemetry: Path) -> str:
    """The first dropped record's reason in a telemetry file ("" when none was)."""
    try:
        doc = json.loads(telemetry.read_text())
    except (OSError, ValueError):
        return ""
    items = doc.get("completeness", {}).get("dropped_records", []) if isinstance(doc, dict) else []
    return str(items[0].get("reason", "?")) if items else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=int, default=1024, help="size of the big transcript (MiB)")
    ap.add_argument("--long-line-mib", type=int, default=64, help="its one long line (MiB)")
    ap.add_argument("--baseline-mb", type=int, default=10, help="the in-memory baseline's size (MB)")
    ap.add_argument("--kills", type=int, default=0, help="SIGKILLs during a capture (0: skip)")
    ap.add_argument("--kill-mib", type=int, default=64, help="the killed capture's size (MiB)")
    ap.add_argument("--seed", type=int, default=16)
    args = ap.parse_args(argv)
    base, env = c.isolated_env("abcd-bench-big-")
    c.apply_env(env)
    try:
        from abcd_daemon.config import load_config
        from abcd_daemon.paths import Home
        from abcd_daemon.queue.scanners import ScannerPool
        from abcd_daemon.store.lane import Lane

        repo = base / "repo"
        sha = c.make_repo(repo)
        home = Home(env["ABCD_HOME"])
        home.root.mkdir(mode=0o700, parents=True)
        (home.root / "config.toml").write_text("watch_harness_store = false\n")
        config = load_config(home.root / "config.toml")
        maker = c.TranscriptMaker(args.seed, cwd=str(repo), home=os.path.expanduser("~"))
        rng = random.Random(args.seed)
        # 1-2: baseline and streaming in this process, on the same 10 MB.
        small = base / "small.jsonl"
        small.write_bytes(maker.transcript(args.baseline_mb * c.MB, session=maker.session_id()))
        scanner = ScannerPool(config).get(str(repo))
        raw = small.read_bytes()
        baseline_inmemory(Lane(home, "b" * 40), raw[: 1 * c.MB], scanner, config)  # warm
        inmem = baseline_inmemory(Lane(home, "b" * 40), raw, scanner, config)
        streamed = streaming_inprocess(Lane(home, "a" * 40), small, scanner, config)
        del raw, scanner
        print(f"10 MB: in-memory {inmem:.2f} MB/s, streaming (in-process) {streamed:.2f} MB/s")
        # 3: the big one through the hook and the daemon.
        session = maker.session_id()
        big = base / "big.jsonl"
        t0 = time.perf_counter()
        size, lines = write_transcript(big, maker, session, args.mib, args.long_line_mib)
        print(f"wrote {size / c.MIB:.0f} MiB, {lines} lines ({time.perf_counter() - t0:.0f}s)")
        daemon = Daemon(env, base / "daemon.log").wait_ready()
        idle_kb = daemon.status_kb("VmRSS")
        sampler = Sampler(daemon)
        sampler.start()
        t0 = time.perf_counter()
        hand_over(env, repo, session, big)
        [record] = wait_stored(home, sha, session, daemon, timeout=4 * 3600)
        wall = time.perf_counter() - t0
        sampler.stop.set()
        hwm_kb = daemon.status_kb("VmHWM")
        # The drain's pass then indexes the new record (read lean) and gives the memory
        # back: the daemon's peak over that, and its RSS once it is done.
        t1 = time.perf_counter()
        indexed = wait_indexed(home, session, daemon, timeout=3600)
        index_s = time.perf_counter() - t1
        index_hwm_kb = daemon.status_kb("VmHWM")
        # The sync ends (checkpoint, trim) some seconds after the rows are visible: the
        # lowest RSS within 60 s, stopping early once within 40 MB of idle.
        after_kb = daemon.status_kb("VmRSS")
        for _ in range(60):
            if after_kb < idle_kb + 40 * 1024:
                break
            time.sleep(1)
            after_kb = min(after_kb, daemon.status_kb("VmRSS"))
        c.check(daemon.stop() == 0, "the daemon did not stop cleanly")
        for line in (base / "daemon.log").read_text(errors="replace").splitlines():
            if " intake " in line or " stored " in line:
                print("daemon:", line[:160])  # when intake staged it, when the drain stored it
        from abcd_daemon.store.records import open_body

        f, n = open_body(Lane(home, sha), record)
        with f:
            stored_lines = sum(block.count(b"\n") for block in iter(lambda: f.read(c.MIB), b""))
        c.check(stored_lines == lines, f"stored {stored_lines} lines of {lines}")
        capture_mbps = size / c.MB / wall
        peak_mb = max(hwm_kb, sampler.peak_kb) / 1024
        # 3b: reconstruct that session, spine and full (the daemon is stopped: in-process).
        runs = [reconstruct_once(env, repo, session, mode, base / "export", n)
                for mode in ("spine", "full")]
        for run in runs:
            print(f"reconstruct {run['mode']}: exit {run['exit']}, {run['seconds']}s, "
                  f"peak RSS {run['rss_mb']} MB" + (f", {run['mb_per_s']} MB/s" if "mb_per_s" in run
                                                    else f" — {run.get('refused', '')}"))
        # The machine is shared: measure the in-memory baseline again after the big
        # capture, and compare with the mean of both (both are reported).
        raw = small.read_bytes()
        inmem_after = baseline_inmemory(Lane(home, "b" * 40), raw, scanner_again(config, repo), config)
        del raw
        inmem_mean = (inmem + inmem_after) / 2
        done = [r for r in runs if "mb_per_s" in r]
        recon_rss = max(r["rss_mb"] for r in runs)
        recon_mbps = min(r["mb_per_s"] for r in done) if len(done) == len(runs) else None
        print(f"{size / c.MIB:.0f} MiB via hook → daemon: {wall:.1f}s, {capture_mbps:.2f} MB/s, "
              f"daemon RSS idle {idle_kb / 1024:.0f} MB, peak {peak_mb:.0f} MB; indexed "
              f"{'in %.0fs' % index_s if indexed else 'NOT within the timeout'}, peak "
              f"{index_hwm_kb / 1024:.0f} MB; after {after_kb / 1024:.0f} MB")
        out = {"gib": round(size / (1 << 30), 3), "long_line_mib": args.long_line_mib,
               "capture_rss_mb": round(peak_mb, 1), "capture_mb_per_s": round(capture_mbps, 2),
               "inmemory_mb_per_s": round(inmem, 2), "inmemory_after_mb_per_s": round(inmem_after, 2),
               "streaming_10mb_mb_per_s": round(streamed, 2),
               "capture_vs_inmemory": round(capture_mbps / inmem_mean, 3),
               "reconstruct_rss_mb": recon_rss, "reconstruct_mb_per_s": recon_mbps,
               "daemon_idle_mb": round(idle_kb / 1024, 1),
               "daemon_index_rss_mb": round(index_hwm_kb / 1024, 1) if indexed else None,
               "daemon_after_mb": round(after_kb / 1024, 1),
               "reconstruct": runs}
        if args.kills:
            k = run_kills(env, base, repo, sha, maker, args.kills, args.kill_mib, rng)
            out.update(k, kill_mib=args.kill_mib)
        else:
            out.update(kills=0, partial_records=None, lost=None)
        out["targets_met"] = (out["capture_rss_mb"] <= TARGETS["capture_rss_mb"]
                              and out["capture_vs_inmemory"] >= TARGETS["capture_vs_inmemory"]
                              and recon_mbps is not None
                              and recon_rss <= TARGETS["reconstruct_rss_mb"]
                              and recon_mbps >= TARGETS["reconstruct_mb_per_s"]
                              and not out.get("partial_records") and not out.get("lost"))
        out["uptime"] = os.getloadavg()
        c.emit_json(out)
    finally:
        c.cleanup(base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
