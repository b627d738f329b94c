"""Search and usage index benchmark (a script, not a test): ``.venv/bin/python bench/search.py``.

Builds a reproducible corpus (seeded) of records across ``--sessions`` sessions in a
temporary ABCD_HOME: each session a main thread and a few sub-agents whose lines are
sampled from the real Claude Code fixtures (session ids, message ids and words
re-drawn so no two sessions share text), ``--mb`` megabytes in all. Then, in one run:

- index build (``sync`` from empty), MB of record bytes per second;
- incremental update: one new 1 MB record, synced;
- size: the index file (after a WAL checkpoint) against the records' bytes;
- ``search`` over 50 seeded queries (words, phrases, prefixes, filtered), p50/p99
  in-process, and ``grep -rF`` for the same words over the records, as a ratio;
- ``usage daily`` over every session.

The issue's scale is 1 GB over 2,000 sessions (``--mb 1024 --sessions 2000``); the
default is smaller so a run fits on a shared machine — the JSON says what was run.
Last line: ``{"build_mb_per_s", "update_ms", "size_ratio", "search_p50_ms",
"search_p99_ms", "grep_ratio", "usage_ms", "mb", "sessions"}``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from abcd_daemon.index.db import connect, index_path, sync  # noqa: E402
from abcd_daemon.index.pricing import Pricing  # noqa: E402
from abcd_daemon.index.query import Filters, search  # noqa: E402
from abcd_daemon.index.usage import report  # noqa: E402
from abcd_daemon.paths import Home  # noqa: E402
from abcd_daemon.store.lane import Lane  # noqa: E402
from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "claude-code-log" / "real_projects"
WORDS = ("deploy", "retry", "flaky", "migration", "schema", "cache", "socket", "timeout", "parser", "rollback",
         "benchmark", "lineage", "sidecar", "compaction", "quarantine", "fixture", "rename", "checksum")


def _lines() -> list[dict]:
    out = []
    for p in sorted(FIXTURES.rglob("*.jsonl")):
        for raw in p.read_bytes().splitlines():
            try:
                v = json.loads(raw)
            except ValueError:
                continue
            if isinstance(v, dict) and v.get("type") in ("user", "assistant") and isinstance(v.get("message"), dict):
                out.append(v)
    return out


def _thread(rng: random.Random, pool: list[dict], session: str, size: int, t0: float) -> bytes:
    out, n, i = [], 0, 0
    while n < size:
        v = json.loads(json.dumps(rng.choice(pool)))
        v["sessionId"] = session
        v["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + i)) + ".000Z"
        msg = v["message"]
        if v["type"] == "assistant":
            msg["id"] = "msg_" + uuid.UUID(int=rng.getrandbits(128)).hex[:24]
            msg["content"] = [{"type": "text", "text": " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
                               + f" ref{rng.randrange(10**6)}"}] + [b for b in msg.get("content", [])
                                                                    if isinstance(b, dict) and b.get("type") != "text"]
        line = json.dumps(v, separators=(",", ":")).encode()
        out.append(line)
        n += len(line) + 1
        i += 1
    return b"\n".join(out) + b"\n"


def _store(lane: Lane, session: str, body: bytes, agent: str, ns: int) -> None:
    rec = Record(session_id=session, root_commit=lane.root_sha, source_sha256=hashlib.sha256(body).hexdigest(),
                 captured_at=format_rfc3339_ns(ns), agent_id=agent, agent_type="Explore" if agent else "")
    (lane.records / record_filename(rec)).write_bytes(format_record(rec, body))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=64)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    pool = _lines()
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(os.path.join(tmp, "home"))
        os.makedirs(home.root, mode=0o700)
        lane = Lane(home, "1" * 40)
        lane.ensure("records")
        per = int(args.mb * 1e6 / args.sessions)
        t0 = 1_790_000_000.0
        for s in range(args.sessions):
            session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            _store(lane, session, _thread(rng, pool, session, per * 2 // 3, t0 + s * 3600), "", int((t0 + s) * 1e9))
            for a in range(2):
                _store(lane, session, _thread(rng, pool, session, per // 6, t0 + s * 3600 + 60),
                       f"a{rng.getrandbits(64):016x}", int((t0 + s) * 1e9) + a + 1)
        rec_bytes = sum(p.stat().st_size for p in lane.records.iterdir())
        conn = connect(home)
        t = time.perf_counter()
        sync(conn, home)
        build_s = time.perf_counter() - t
        session = str(uuid.uuid4())
        _store(lane, session, _thread(rng, pool, session, 1_000_000, t0), "", int(t0 * 1e9) + 999)
        t = time.perf_counter()
        sync(conn, home)
        update_ms = (time.perf_counter() - t) * 1000
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size_ratio = os.path.getsize(index_path(home)) / rec_bytes
        queries = []
        for i in range(50):
            w = rng.choice(WORDS)
            kind = i % 5
            queries.append((f'"{w} {rng.choice(WORDS)}"' if kind == 1 else w[:4] + "*" if kind == 2 else w,
                            Filters(role="assistant") if kind == 3 else Filters(agent_type="main") if kind == 4
                            else Filters()))
        times, grep_times = [], []
        for q, f in queries:
            t = time.perf_counter()
            search(conn, q, f)
            times.append((time.perf_counter() - t) * 1000)
        for q, _ in queries[::5]:
            word = q.strip('"*').split()[0]
            t = time.perf_counter()
            subprocess.run(["grep", "-rFl", word, str(lane.records)], capture_output=True)
            grep_times.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        report(conn, "daily", Pricing())
        usage_ms = (time.perf_counter() - t) * 1000
        times.sort()
        p50 = statistics.median(times)
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        mb = rec_bytes / 1e6
        print(f"records        {mb:.1f} MB, {args.sessions} sessions")
        print(f"build          {build_s:.2f} s = {mb / build_s:.1f} MB/s")
        print(f"update (1 MB)  {update_ms:.0f} ms")
        print(f"index size     {size_ratio:.2f} of the records")
        print(f"search         p50 {p50:.1f} ms, p99 {p99:.1f} ms (in-process); grep -rF median "
              f"{statistics.median(grep_times):.0f} ms")
        print(f"usage daily    {usage_ms:.0f} ms")
        print(json.dumps({"build_mb_per_s": round(mb / build_s, 1), "update_ms": round(update_ms),
                          "size_ratio": round(size_ratio, 2), "search_p50_ms": round(p50, 1),
                          "search_p99_ms": round(p99, 1),
                          "grep_ratio": round(statistics.median(grep_times) / p50, 1),
                          "usage_ms": round(usage_ms), "mb": round(mb, 1), "sessions": args.sessions}))


if __name__ == "__main__":
    main()
