"""Search and usage index benchmark (a script, not a test): ``.venv/bin/python bench/search.py``.

On the seeded corpus of :mod:`bench.search_corpus` (built once under the temp dir,
never in the repository; the issue's scale is the default: ≥ 1 GB of records across
2,000 sessions), in one run:

- build: ``sync`` from an empty index in this process (one thread), MB of record bytes
  per second of wall time, and per second of this process's CPU time (the machine is
  shared: the CPU figure is what one core does);
- update: one new 1 MB record in the corpus's lane, indexed as the daemon does after
  a drain pass stores it (``IndexKeeper.update`` told the file's name, on the keeper's
  writer after its start-up repair) — five times, one record each: the median (and the
  max: a commit now and then also does a quantum of FTS5's merging); alternated with
  as many records synced by a full scan of the lane (``update_full_scan_ms``, what an
  update cost before the drain named its files);
- size: the index (after a WAL checkpoint) against the records' bytes;
- search: 50 seeded queries (common, mid-frequency and rare words, phrases, prefixes,
  and words under ``--role`` / ``--agent-type`` / ``--tool`` / ``--since`` filters),
  each timed three ways: ``abcd search … --json`` end to end as a process against a
  running daemon (the headline figures), the same request over the daemon's socket
  from this process by the CLI's own JSON client (what the daemon adds to a CLI's
  start-up), and in-process;
- ``grep -rFl`` for the words of ten of the queries over the records, the ratio of
  its median to the CLI's median;
- ``abcd usage daily --all-repos --json`` over every session, end to end (median of 5).

Last line: ``{"build_mb_per_s", "update_ms", "size_ratio", "search_p50_ms",
"search_p99_ms", "grep_ratio", "usage_ms", …}`` with the corpus, the CLI's bare
start-up (``abcd --version``, through typer), the interpreter's floors (``python -c
"import json, socket"``: what the JSON client the served search uses pays before it
does anything; ``"import msgspec, socket"``: what a msgpack client pays), the socket
and in-process figures and the load. The
package is byte-compiled first, as ``pip install`` does.
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import apply_env, cleanup, emit_json, isolated_env, median, percentile  # noqa: E402

UPDATES = 5
TARGETS = {"build_mb_per_s": (25, ">="), "update_ms": (150, "<="), "size_ratio": (0.7, "<="),
           "search_p50_ms": (60, "<="), "search_p99_ms": (300, "<="), "usage_ms": (200, "<=")}


def queries(rng: random.Random, vocab: list[str], pool: str) -> list[tuple[str, dict]]:
    """50 seeded (query, filters) pairs; filters as ``SearchRequest`` fields."""
    common, mid, rare = vocab[:50], vocab[50:3000], vocab[3000:]
    out: list[tuple[str, dict]] = []
    for i in range(50):
        kind = i % 10
        if kind in (0, 1):
            q = rng.choice(mid)
        elif kind == 2:
            q = rng.choice(common)
        elif kind == 3:
            q = rng.choice(rare)
        elif kind in (4, 5):  # a phrase that occurs: two adjacent words of the text
            at = pool.find(" ", rng.randrange(len(pool) - 100)) + 1
            q = '"' + " ".join(pool[at:at + 100].split()[:2]) + '"'
        elif kind == 6:
            q = rng.choice(mid)[:4] + "*"
        else:
            q = rng.choice(mid)
        filters = {7: {"role": "assistant"}, 8: {"agent_type": "main"},
                   9: {"tool": "Bash"} if i % 20 == 9 else {"since_ns": int((1_790_000_000 + 30 * 86400) * 1e9)}}
        out.append((q, filters.get(kind, {})))
    return out


def cli_args(q: str, f: dict) -> list[str]:
    args = ["search", q, "--all-repos", "--json"]
    for key, flag in (("role", "--role"), ("agent_type", "--agent-type"), ("tool", "--tool")):
        if key in f:
            args += [flag, f[key]]
    if "since_ns" in f:
        args += ["--since", time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(f["since_ns"] / 1e9))]
    return args


def spawn(argv: list[str], env: dict) -> float:
    """Milliseconds from spawn to exit of ``argv`` (output discarded); raises on failure."""
    t = time.perf_counter()
    res = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ms = (time.perf_counter() - t) * 1000
    if res.returncode != 0:
        raise SystemExit(f"{argv[1:]} failed: {res.stderr.decode(errors='replace')[-400:]}")
    return ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=1024)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cache", default=tempfile.gettempdir(), help="where the corpus is built and kept")
    args = ap.parse_args()
    for package in ("abcd_client", "abcd_daemon"):  # as pip install does: measure start-up, not compiling
        compileall.compile_dir(str(ROOT / package), quiet=1)
    from bench.search_corpus import LANE, ensure_corpus, store, writer

    home, info = ensure_corpus(args.seed, args.mb, args.sessions, Path(args.cache),
                               say=lambda s: print(s, file=sys.stderr))
    base, env = isolated_env("abcd-bench-search-")
    env["ABCD_HOME"] = str(home.root)
    apply_env(env)
    from abcd_daemon.index.db import connect, index_path, sync
    from abcd_daemon.index.keeper import IndexKeeper
    from abcd_daemon.index.pricing import Pricing
    from abcd_daemon.index.query import Filters, search
    from abcd_daemon.index.usage import report
    from abcd_daemon.store.lane import Lane

    lane = Lane(home, LANE)
    for suffix in ("", "-wal", "-shm"):
        Path(index_path(home) + suffix).unlink(missing_ok=True)
    rec_bytes = sum(e.stat().st_size for e in os.scandir(lane.records) if e.name.endswith(".md"))
    mb = rec_bytes / 1e6
    conn = connect(home)
    t, c = time.perf_counter(), time.process_time()
    sync(conn, home)
    build_s, build_cpu = time.perf_counter() - t, time.process_time() - c
    print(f"build          {mb:.0f} MB in {build_s:.1f} s = {mb / build_s:.1f} MB/s "
          f"({mb / build_cpu:.1f} MB per CPU second)", file=sys.stderr)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size_ratio = os.path.getsize(index_path(home)) / rec_bytes
    w = writer(args.seed + 1)
    # The update as the daemon makes it: its IndexKeeper's writer, level after the
    # start-up repair (a full sync with nothing to do), then after each drain pass
    # told the record files the pass stored (server/drain_loop.py: index_sync with
    # {root: names} -> IndexKeeper.update). For comparison, the full scan of the lane
    # each update cost before (db.sync of the lane): alternated, one record each.
    keeper = IndexKeeper(home)
    t = time.perf_counter()
    keeper.sync(None)
    repair_ms = (time.perf_counter() - t) * 1000
    updates, update_ms, full_ms = [], [], []
    for k in range(UPDATES):
        for side, times in (("update", update_ms), ("full", full_ms)):
            extra = "0" * 8 + f"-{side}-{os.getpid()}-{k}"
            store(lane, extra, w.thread(extra, "", 1_000_000, 1_800_000_000 + k), "", "", (1_800_000_000 + k) * 10**9)
            names = [p.name for p in lane.records.iterdir() if extra in p.name]
            updates += [lane.records / n for n in names]
            t = time.perf_counter()
            if side == "update":
                done = keeper.update({lane.root_sha: names})
            else:
                done = sync(conn, home, lanes=[lane])
            times.append((time.perf_counter() - t) * 1000)
            if done != (1, 0):
                raise SystemExit(f"the {side} indexed {done} (records, dropped), not the one new record")
    keeper.close()
    print(f"update         {UPDATES} records of 1 MB, the drain's update each: median {median(update_ms):.0f} ms, "
          f"max {max(update_ms):.0f} ms; a full scan of the lane instead: median {median(full_ms):.0f} ms, "
          f"max {max(full_ms):.0f} ms; the start-up repair with nothing to do {repair_ms:.0f} ms", file=sys.stderr)
    rng = random.Random(args.seed)
    from bench.search_corpus import TextPool, vocabulary  # the corpus's own words

    vrng = random.Random(args.seed)
    vocab = vocabulary(vrng)
    pool = TextPool(vrng, vocab).text
    qs = queries(rng, vocab, pool)
    inproc = []
    for q, f in qs:
        t = time.perf_counter()
        search(conn, q, Filters(**f))
        inproc.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter()
    report(conn, "daily", Pricing())
    usage_inproc = (time.perf_counter() - t) * 1000
    conn.close()
    from bench.hooks import Daemon

    abcd = str(Path(sys.executable).with_name("abcd"))
    daemon = Daemon(env, base / "daemon.log").wait_ready(timeout=120)
    try:
        from abcd_client import json_client
        from abcd_client.connect import connect as dial
        from abcd_daemon.wire.messages import UsageRequest

        time.sleep(2.5)  # the records went quiet: the daemon's next sync marks them level
        spawn([abcd, "search", "warm", "--all-repos", "--json"], env)
        served, cli = [], []
        for q, f in qs:
            t = time.perf_counter()
            with json_client.connect(env["ABCD_SOCKET"]) as client:
                client.request("search", dict(query=q, **f))
            served.append((time.perf_counter() - t) * 1000)
            cli.append(spawn([abcd, *cli_args(q, f)], env))
        floor = median([spawn([abcd, "--version"], env) for _ in range(10)])
        # what a CLI that speaks the protocol pays before it does anything: the
        # interpreter with this environment's site-packages, its codec and socket
        interp = median([spawn([sys.executable, "-c", "import json, socket"], env) for _ in range(10)])
        interp_msgspec = median([spawn([sys.executable, "-c", "import msgspec, socket"], env) for _ in range(10)])
        usage = []
        for _ in range(5):
            usage.append(spawn([abcd, "usage", "daily", "--all-repos", "--json"], env))
        t = time.perf_counter()
        with dial(env["ABCD_SOCKET"]) as client:
            rows = len(client.request(UsageRequest(kind="daily")).report.rows)
        usage_served = (time.perf_counter() - t) * 1000
    finally:
        daemon.stop()
        for path in updates:
            path.unlink()
        cleanup(base)
    grep = []
    for q, _ in qs[:10]:
        word = q.strip('"*').split()[0]
        t = time.perf_counter()
        subprocess.run(["grep", "-rFl", word, str(lane.records)], capture_output=True)
        grep.append((time.perf_counter() - t) * 1000)
    p50, p99 = median(cli), percentile(cli, 99)
    print(f"search (CLI)   p50 {p50:.0f} ms, p99 {p99:.0f} ms; `abcd --version` alone {floor:.0f} ms, "
          f"`python -c 'import json, socket'` {interp:.0f} ms, `… 'import msgspec, socket'` "
          f"{interp_msgspec:.0f} ms", file=sys.stderr)
    print(f"search socket  p50 {median(served):.1f} ms, p99 {percentile(served, 99):.1f} ms; in-process p50 "
          f"{median(inproc):.1f} ms, p99 {percentile(inproc, 99):.1f} ms", file=sys.stderr)
    print(f"grep -rFl      median {median(grep):.0f} ms; usage daily ({rows} days) CLI {median(usage):.0f} ms, "
          f"socket {usage_served:.0f} ms, in-process {usage_inproc:.0f} ms", file=sys.stderr)
    figures = {"build_mb_per_s": round(mb / build_s, 1), "update_ms": round(median(update_ms)),
               "size_ratio": round(size_ratio, 2), "search_p50_ms": round(p50, 1),
               "search_p99_ms": round(p99, 1), "grep_ratio": round(median(grep) / p50, 1),
               "usage_ms": round(median(usage))}
    missed = [k for k, (v, op) in TARGETS.items() if not (figures[k] >= v if op == ">=" else figures[k] <= v)]
    if missed:
        print("MISSED: " + ", ".join(f"{k} {figures[k]} (target {TARGETS[k][1]} {TARGETS[k][0]})" for k in missed),
              file=sys.stderr)
    emit_json(dict(figures, build_mb_per_cpu_s=round(mb / build_cpu, 1), cli_floor_ms=round(floor, 1),
                   interp_floor_ms=round(interp, 1), msgspec_floor_ms=round(interp_msgspec, 1),
                   update_max_ms=round(max(update_ms)),
                   update_full_scan_ms=round(median(full_ms)), update_full_scan_max_ms=round(max(full_ms)),
                   repair_idle_ms=round(repair_ms),
                   socket_p50_ms=round(median(served), 1), socket_p99_ms=round(percentile(served, 99), 1),
                   inproc_p50_ms=round(median(inproc), 1), inproc_p99_ms=round(percentile(inproc, 99), 1),
                   usage_socket_ms=round(usage_served), usage_inproc_ms=round(usage_inproc),
                   grep_median_ms=round(median(grep)), mb=round(mb, 1), sessions=info["sessions"],
                   records=info["records"], cpus=os.cpu_count(), load=round(os.getloadavg()[0], 2)))


if __name__ == "__main__":
    main()
