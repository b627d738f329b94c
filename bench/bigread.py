"""Benchmark: reconstructing one large record, read lean — CPU seconds, not wall time.

``bench/bigfile.py`` measures the read-back after a real capture, in wall time on a
shared machine; this one measures only the read-back, so two versions of the code can
be compared on a loaded machine. It writes ``bench/bigfile.py``'s seeded transcript
(``--mib`` MiB with one ``--long-line-mib`` MiB line) straight into a record (no
redaction: reconstruct reads what is stored), then reconstructs it, ``--mode spine``
and ``full`` with the per-block cap on (8 KiB, the CLI's default), into a file, each in a
fresh interpreter: its process CPU time, wall time and peak RSS (``VmHWM``), and the
SHA-256 of the artefact and the telemetry (``generated_at`` aside).

``--tree PATH`` (repeatable) runs each reconstruct against that source tree instead of
this one (for instance ``git archive main | tar -x -C /tmp/base``); the trees are run
alternately, ``--repeat`` rounds, so a change of load falls on both. Every tree must
write the same bytes (``identical``). ``--profile FILE`` runs one spine reconstruct of
this tree under cProfile into FILE instead.

Last line: ``{"mib", "lines", "record_mb", "runs": {tree: {mode: {"cpu_s", "wall_s",
"rss_mb", "mb_per_cpu_s"}}}, "identical", "uptime"}`` — each figure the median of the
rounds.

    .venv/bin/python bench/bigread.py [--mib 128] [--long-line-mib 16] [--repeat 3]
        [--tree /tmp/base] [--profile /tmp/prof.out]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as c  # noqa: E402
from bigfile import write_transcript  # noqa: E402

HERE = str(c.ROOT)

#: One reconstruct in a fresh interpreter: argv tree, home, sha, session, mode, out,
#: spill dir, profile file (or "").
_CHILD = """
import hashlib, json, sys, time
sys.path.insert(0, sys.argv[1])
import abcd_daemon
from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
home, sha, session, mode, out, spill, prof = sys.argv[2:9]
opts = ReconstructOptions(session_id=session, mode=mode, max_block_bytes=8 << 10)
def run():
    with open(out, "wb") as sink:
        return reconstruct(Lane(Home(home), sha), opts, now_ns=1, sink=sink, spill_dir=spill)
w0, c0 = time.perf_counter(), time.process_time()
if prof:
    import cProfile
    cProfile.run("result = run()", prof)
else:
    result = run()
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
digest = hashlib.sha256()
with open(out, "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        digest.update(block)
digest.update(result.telemetry_json())
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
print(json.dumps({"cpu_s": cpu, "wall_s": wall, "rss_mb": int(hwm) / 1024,
                  "sha256": digest.hexdigest(), "module": abcd_daemon.__file__}))
"""


def store_big(lane, session: str, path: Path) -> int:
    """Write ``path`` (a transcript) as ``session``'s record in ``lane``, streamed;
    returns the body's bytes."""
    import hashlib

    from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(c.MIB), b""):
            digest.update(block)
    record = Record(session_id=session, root_commit=lane.root_sha,
                    source_sha256=digest.hexdigest(), captured_at=format_rfc3339_ns(1_780_000_000 * 10**9))
    lane.ensure("records")
    with open(lane.records / record_filename(record), "wb") as out, open(path, "rb") as f:
        out.write(format_record(record, b"\n")[:-1])
        for block in iter(lambda: f.read(c.MIB), b""):
            out.write(block)
    return path.stat().st_size


def run_child(tree: str, env: dict, home, sha: str, session: str, mode: str, base: Path,
              prof: str = "") -> dict:
    out, spill = base / f"out-{mode}.md", base / "spill"
    spill.mkdir(exist_ok=True)
    res = subprocess.run([sys.executable, "-c", _CHILD, tree, str(home.root), sha, session, mode,
                          str(out), str(spill), prof], env=dict(env, PYTHONHASHSEED="0"),
                         capture_output=True, text=True, timeout=4 * 3600)
    if res.returncode:
        raise SystemExit(f"reconstruct in {tree} failed:\n{res.stderr[-2000:]}")
    out.unlink()
    got = json.loads(res.stdout.strip().splitlines()[-1])
    if not got["module"].startswith(str(Path(tree).resolve())):
        raise SystemExit(f"{tree}: the child imported {got['module']}")
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=int, default=128)
    ap.add_argument("--long-line-mib", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--modes", default="spine,full")
    ap.add_argument("--tree", action="append", default=[], help="another source tree to run")
    ap.add_argument("--profile", default="", help="cProfile one spine run of this tree into FILE")
    ap.add_argument("--seed", type=int, default=16)
    args = ap.parse_args(argv)
    base, env = c.isolated_env("abcd-bench-bigread-")
    c.apply_env(env)
    try:
        from abcd_daemon.paths import Home
        from abcd_daemon.store.lane import Lane

        home = Home(env["ABCD_HOME"])
        home.root.mkdir(mode=0o700, parents=True)
        sha = "c" * 40
        maker = c.TranscriptMaker(args.seed, cwd="/work/repo", home=os.path.expanduser("~"))
        session = maker.session_id()
        path = base / "big.jsonl"
        size, lines = write_transcript(path, maker, session, args.mib, args.long_line_mib)
        record_bytes = store_big(Lane(home, sha), session, path)
        path.unlink()
        if args.profile:
            r = run_child(HERE, env, home, sha, session, "spine", base, args.profile)
            print(f"profiled: {r['cpu_s']:.1f} CPU s -> {args.profile}")
            return 0
        trees = [HERE, *args.tree]
        modes = args.modes.split(",")
        got: dict = {t: {m: [] for m in modes} for t in trees}
        digests: dict = {m: set() for m in modes}
        for n in range(args.repeat):
            for mode in modes:
                for tree in trees if n % 2 == 0 else trees[::-1]:
                    r = run_child(tree, env, home, sha, session, mode, base)
                    got[tree][mode].append(r)
                    digests[mode].add(r["sha256"])
                    print(f"{tree} {mode}: {r['cpu_s']:.2f} CPU s, {r['wall_s']:.2f} s, "
                          f"{r['rss_mb']:.0f} MB, load {os.getloadavg()[0]:.1f}", flush=True)
        mb = record_bytes / c.MB
        runs = {t: {m: {"cpu_s": round(statistics.median(r["cpu_s"] for r in rs), 2),
                        "wall_s": round(statistics.median(r["wall_s"] for r in rs), 2),
                        "rss_mb": round(max(r["rss_mb"] for r in rs), 1),
                        "mb_per_cpu_s": round(mb / statistics.median(r["cpu_s"] for r in rs), 2)}
                    for m, rs in by_mode.items()} for t, by_mode in got.items()}
        c.emit_json({"mib": args.mib, "lines": lines, "record_mb": round(mb, 1), "runs": runs,
                     "identical": all(len(d) == 1 for d in digests.values()),
                     "uptime": os.getloadavg()})
    finally:
        c.cleanup(base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
