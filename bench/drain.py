"""Benchmark: staging and draining vs. bare capture, on the same bytes, in one run.

What is measured (every figure reported is the median over the rounds):

- ``stage_per_s``: ``stage()`` calls per second, single-threaded (the daemon's intake
  stages one payload at a time), over N seeded sub-agent transcripts (log-normal
  sizes, median ~100 KB, p99 ~5 MB) plus M main threads, each staged with its source
  path and repository root exactly as intake does. A run with ``--threads`` workers
  staging into another lane is reported beside it (``stage_threads_per_s``).
- ``drain_mb_per_s``: ``drain_pass`` over the staged lane with the daemon's default
  budget, pass after pass until the lane is empty (planning, sidecar reads, the
  source re-read for ``extended``, capture, removal of the staged copy).
- ``capture_mb_per_s``: ``capture()`` of the same bytes and metadata into a separate
  lane — redaction and the record write, without the queue. Each drain pass is
  paired with the capture of exactly the entries it takes, run right before or after
  it (alternating), so the two see the same bytes at the same moment of a noisy
  machine; ``os.sync()`` runs before every timed segment so no phase pays for
  another's writeback.
- ``drain_overhead`` = drain MB/s ÷ capture MB/s (1.0 = the queue costs nothing).

Each round uses fresh lanes; drain and capture share one warmed scanner (built
outside the timings). ``--prefill K`` ages both lanes with K foreign records first
(capture lists every record of its lane, so its cost grows with the lane);
``--base-dir /dev/shm`` takes the disk out of the figures.

Targets: ``drain_overhead >= 0.8`` (the queue costs < 20 % over redaction itself) and
``stage_per_s >= 500``.

Runs in a fresh temporary ABCD_HOME / ABCD_SOCKET / TMPDIR and removes it afterwards.
Prints a table, then, as its LAST line, one JSON object:
{"stage_per_s", "drain_mb_per_s", "capture_mb_per_s", "drain_overhead", ...}.

    .venv/bin/python bench/drain.py [--agents 200] [--mains 8] [--rounds 7] [--seed 7]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as c  # noqa: E402

TARGET_OVERHEAD = 0.8
TARGET_STAGE_PER_S = 500.0


@dataclass
class Item:
    """One transcript to stage/capture: its bytes, metadata and source file."""

    raw: bytes
    meta: object
    source: str


@dataclass
class Round:
    stage_s: list[float]
    stage_lat: list[float]
    stage_threads_s: float
    drain_s: float
    drain_passes: int
    capture_s: float


# --------------------------------------------------------------------------- setup


def build_corpus(base: Path, repo: Path, *, agents: int, mains: int, seed: int) -> list[Item]:
    """Seeded transcripts written under a Claude-Code-like project dir (the source
    paths the sidecars record), with their capture metadata."""
    from abcd_daemon.store.meta import CaptureMeta

    maker = c.TranscriptMaker(seed, cwd=str(repo), home=os.environ.get("HOME", "/root"))
    rng = maker.rng
    sub_sizes = c.lognormal_sizes(rng, agents, median_bytes=100 * c.KB, p99_bytes=5 * c.MB)
    main_sizes = c.lognormal_sizes(rng, mains, median_bytes=250 * c.KB, p99_bytes=5 * c.MB)
    project = base / "projects" / "-bench-repo"
    items: list[Item] = []
    sessions = [maker.session_id() for _ in range(max(1, mains))]
    for i, size in enumerate(main_sizes):
        session = sessions[i]
        path = project / f"{session}.jsonl"
        items.append(_write(path, maker.transcript(size, session=session),
                            CaptureMeta(session_id=session, lineage_source="hook")))
    for i, size in enumerate(sub_sizes):
        session, agent = sessions[i % len(sessions)], maker.agent_id()
        path = project / session / "subagents" / f"agent-{agent}.jsonl"
        meta = CaptureMeta(session_id=session, agent_id=agent, agent_type="general-purpose",
                           lineage_source="hook", spawn_attribution="unattributed")
        items.append(_write(path, maker.transcript(size, session=session, agent=agent), meta))
    return items


def _write(path: Path, raw: bytes, meta) -> Item:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return Item(raw=raw, meta=meta, source=str(path))


def lane_for(home, label: str):
    """A lane with a fixed synthetic root SHA (lanes only need the SHA)."""
    from abcd_daemon.store.lane import Lane

    return Lane(home, hashlib.sha1(label.encode()).hexdigest())


# --------------------------------------------------------------------------- phases


def run_stage(lane, items: list[Item], *, config, repo_root: str) -> tuple[float, list[float]]:
    """Stage every item, one at a time. Returns (elapsed s, per-call latencies)."""
    from abcd_daemon.queue.stage import stage

    lat = []
    t0 = time.perf_counter()
    for it in items:
        t = time.perf_counter()
        res = stage(lane, it.raw, it.meta, config=config, now_ns=time.time_ns(),
                    source_path=it.source, repo_root=repo_root)
        lat.append(time.perf_counter() - t)
        c.check(res.wrote, "a fresh lane must stage every item")
    return time.perf_counter() - t0, lat


def run_stage_threads(lane, items: list[Item], *, config, repo_root: str, threads: int) -> float:
    """Stage every item from ``threads`` workers. Returns elapsed s."""
    from abcd_daemon.queue.stage import stage

    def one(it: Item):
        return stage(lane, it.raw, it.meta, config=config, now_ns=time.time_ns(),
                     source_path=it.source, repo_root=repo_root)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        results = list(pool.map(one, items))
    elapsed = time.perf_counter() - t0
    c.check(all(r.wrote for r in results), "a fresh lane must stage every item")
    return elapsed


def run_paired(staged, captured, items: list[Item], *, config, scanners, scanner,
               drain_first: bool) -> tuple[float, float, int]:
    """Drain ``staged`` with the daemon's budget, pass after pass until it is empty,
    and capture() the very entries of each pass into ``captured`` right before or
    after that pass (alternating), so both see the same bytes and the same moment of
    a noisy machine. Returns (drain s, capture s, passes)."""
    from abcd_daemon.queue.drain import drain_pass
    from abcd_daemon.queue.plan import plan_pass
    from abcd_daemon.queue.staged import list_staged

    by_key = {(it.meta.session_id, it.meta.agent_id): it for it in items}
    drain_s = capture_s = 0.0
    passes = stored = 0
    while True:
        plan = plan_pass(list_staged(staged, now_ns=time.time_ns(), ttl_s=config.staged_ttl_s),
                         config.drain_budget)
        if not plan.take:
            break
        batch = [by_key[(e.session_id, e.agent_id)] for e in plan.take]
        order = ("drain", "capture") if drain_first == (passes % 2 == 0) else ("capture", "drain")
        for what in order:
            settle(0.05)
            if what == "drain":
                t0 = time.perf_counter()
                res = drain_pass([staged], config.drain_budget, scanners=scanners, config=config)
                drain_s += time.perf_counter() - t0
                if res.failed or len(res.captured) != len(batch):
                    raise SystemExit(f"drain pass stored {len(res.captured)} of {len(batch)}: "
                                     f"{res.failed[0].error if res.failed else ''}")
                stored += len(res.captured)
            else:
                capture_s += run_capture(captured, batch, config=config, scanner=scanner)
        passes += 1
    c.check(stored == len(items), f"drain stored {stored} of {len(items)}")
    return drain_s, capture_s, passes


def run_capture(lane, items: list[Item], *, config, scanner) -> float:
    """capture() every item into ``lane``. Returns elapsed s."""
    from abcd_daemon.store.capture import capture

    t0 = time.perf_counter()
    for it in items:
        res = capture(lane, it.raw, it.meta, scanner=scanner, config=config, now_ns=time.time_ns())
        c.check(res.wrote, "a fresh lane must store every item")
    return time.perf_counter() - t0


def settle(pause: float = 0.2) -> None:
    """Flush what earlier phases left to the disk before the next timed phase, so one
    phase's writeback (and the discards of removed lanes) is not billed to another."""
    os.sync()
    time.sleep(pause)


def prefill(lane, record: bytes, count: int) -> None:
    """Put ``count`` copies of a foreign record into ``lane`` (an aged lane)."""
    if count <= 0:
        return
    lane.ensure("records")
    for k in range(count):
        (lane.records / f"20250101T000000.{k:09d}Z-filler-agent-f{k}.md").write_bytes(record)


def one_round(i: int, home, items: list[Item], *, config, scanners, repo_root: str,
              threads: int, stage_reps: int, filler: bytes, prefill_n: int) -> Round:
    lanes = {kind: lane_for(home, f"{kind}-{i}") for kind in ("stage", "capture", "thr", "spare")}
    stage_s, lat = [], []
    for rep in range(stage_reps):  # the first rep's lane is the one drained below
        settle()
        lane = lanes["stage"] if rep == 0 else lanes["spare"]
        elapsed, rep_lat = run_stage(lane, items, config=config, repo_root=repo_root)
        stage_s.append(elapsed)
        lat += rep_lat
        if rep:
            shutil.rmtree(lane.path)
    thr_s = 0.0
    if threads > 1:
        settle()
        thr_s = run_stage_threads(lanes["thr"], items, config=config, repo_root=repo_root, threads=threads)
        shutil.rmtree(lanes["thr"].path)
    prefill(lanes["stage"], filler, prefill_n)
    prefill(lanes["capture"], filler, prefill_n)
    drain_s, capture_s, passes = run_paired(
        lanes["stage"], lanes["capture"], items, config=config, scanners=scanners,
        scanner=scanners.get(repo_root), drain_first=i % 2 == 0)
    for kind in ("stage", "capture"):
        shutil.rmtree(lanes[kind].path)
    return Round(stage_s, lat, thr_s, drain_s, passes, capture_s)


# --------------------------------------------------------------------------- report


def summarise(rounds: list[Round], items: list[Item], threads: int) -> dict:
    n = len(items)
    mb = sum(len(it.raw) for it in items) / c.MB
    stage_rates = [n / t for r in rounds for t in r.stage_s]
    drain_rates = [mb / r.drain_s for r in rounds]
    capture_rates = [mb / r.capture_s for r in rounds]
    overheads = [d / cap for d, cap in zip(drain_rates, capture_rates)]
    lat = [x for r in rounds for x in r.stage_lat]
    out = {
        "stage_per_s": round(c.median(stage_rates), 1),
        "drain_mb_per_s": round(c.median(drain_rates), 2),
        "capture_mb_per_s": round(c.median(capture_rates), 2),
        "drain_overhead": round(c.median(overheads), 3),
        "stage_concurrency": 1,
        "stage_threads": threads,
        "stage_threads_per_s": round(c.median([n / r.stage_threads_s for r in rounds]), 1) if threads > 1 else None,
        "stage_p50_ms": round(c.median(lat) * 1e3, 3),
        "stage_p99_ms": round(c.percentile(lat, 99) * 1e3, 3),
        "transcripts": n,
        "mb": round(mb, 2),
        "rounds": len(rounds),
    }
    return out


def print_report(rounds: list[Round], items: list[Item], out: dict, threads: int) -> None:
    sizes = [len(it.raw) for it in items]
    print(f"corpus: {len(items)} transcripts, {out['mb']} MB; size p50 "
          f"{c.median(sizes) / c.KB:.0f} KB, p99 {c.percentile(sizes, 99) / c.MB:.2f} MB, "
          f"max {max(sizes) / c.MB:.2f} MB")
    rows = []
    for i, r in enumerate(rounds):
        n, mb = len(items), out["mb"]
        rows.append((i, " ".join(f"{n / t:.0f}" for t in r.stage_s),
                     f"{n / r.stage_threads_s:.0f}" if threads > 1 else "-",
                     f"{mb / r.drain_s:.1f}", r.drain_passes, f"{mb / r.capture_s:.1f}",
                     f"{(mb / r.drain_s) / (mb / r.capture_s):.3f}"))
    print(c.table(rows, ("round", "stage/s (1 thread)", f"stage/s x{threads}" if threads > 1 else "threaded", "drain MB/s",
                         "passes", "capture MB/s", "overhead")))
    verdict = lambda ok: "ok" if ok else "MISSED"  # noqa: E731
    print()
    print(c.table([
        ("stage_per_s (1 thread)", out["stage_per_s"], f">= {TARGET_STAGE_PER_S:g}",
         verdict(out["stage_per_s"] >= TARGET_STAGE_PER_S)),
        ("stage latency p50 / p99 ms", f"{out['stage_p50_ms']} / {out['stage_p99_ms']}", "", ""),
        ("drain_mb_per_s", out["drain_mb_per_s"], "", ""),
        ("capture_mb_per_s", out["capture_mb_per_s"], "", ""),
        ("drain_overhead", out["drain_overhead"], f">= {TARGET_OVERHEAD}",
         verdict(out["drain_overhead"] >= TARGET_OVERHEAD)),
    ], ("median over rounds", "value", "target", "")))
    print()


def make_filler(base: Path, repo: Path, *, config, scanner) -> bytes:
    """One stored record of a session outside the corpus (copied to age a lane)."""
    from abcd_daemon.paths import Home
    from abcd_daemon.store.capture import capture
    from abcd_daemon.store.meta import CaptureMeta

    maker = c.TranscriptMaker(999, cwd=str(repo), home=os.environ.get("HOME", "/root"))
    lane = lane_for(Home(base / "filler-home"), "filler")
    meta = CaptureMeta(session_id="filler-session", agent_id="filler", lineage_source="hook",
                       spawn_attribution="unattributed")
    res = capture(lane, maker.transcript(20 * c.KB, session="filler-session", agent="filler"), meta,
                  scanner=scanner, config=config, now_ns=time.time_ns())
    data = (lane.records / res.record.name).read_bytes()
    shutil.rmtree(base / "filler-home")
    return data


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=200, help="sub-agent transcripts (default 200)")
    ap.add_argument("--mains", type=int, default=8, help="main-thread transcripts (default 8)")
    ap.add_argument("--rounds", type=int, default=7, help="rounds; medians are reported (default 7)")
    ap.add_argument("--stage-reps", type=int, default=3, help="single-threaded staging runs per round (default 3)")
    ap.add_argument("--threads", type=int, default=4, help="workers for the concurrent staging figure (0: skip)")
    ap.add_argument("--prefill", type=int, default=0, metavar="K",
                    help="age both lanes with K foreign records before drain/capture (default 0)")
    ap.add_argument("--base-dir", default=None, help="where the temporary home goes (default: $TMPDIR or /tmp); "
                    "e.g. /dev/shm to take the disk out of the figures")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    base, env = c.isolated_env("abcd-bench-drain-", parent=args.base_dir)
    c.apply_env(env)
    try:
        from abcd_daemon.config import Config
        from abcd_daemon.paths import Home
        from abcd_daemon.queue.scanners import ScannerPool

        repo = base / "repo"
        c.make_repo(repo)
        t0 = time.perf_counter()
        items = build_corpus(base, repo, agents=args.agents, mains=args.mains, seed=args.seed)
        print(f"generated the corpus in {time.perf_counter() - t0:.1f} s (seed {args.seed}) in {base}")
        config, home = Config(), Home(env["ABCD_HOME"])
        scanners = ScannerPool(config, max_age_s=1e9)  # built once, outside the timings
        filler = make_filler(base, repo, config=config, scanner=scanners.get(str(repo)))
        rounds = []
        for i in range(args.rounds):
            rounds.append(one_round(i, home, items, config=config, scanners=scanners,
                                    repo_root=str(repo), threads=args.threads,
                                    stage_reps=args.stage_reps, filler=filler,
                                    prefill_n=args.prefill))
        out = summarise(rounds, items, args.threads)
        out["lane_prefill"] = args.prefill
        print_report(rounds, items, out, args.threads)
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            c.cleanup(base)
    c.emit_json(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
