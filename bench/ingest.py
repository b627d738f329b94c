"""Benchmark: ingest of a generated harness tree, end to end (stage + drain), then the
run that finds nothing new.

The tree: ``--files`` seeded Claude-Code-shaped transcripts (log-normal sizes, median
~100 KB, p99 ~2 MB) across ``--repos`` real git repositories, laid out as
``~/.claude/projects`` is: ``projects/-bench-repo-<i>/<session>.jsonl`` for a fifth of
them and ``<session>/subagents/agent-<id>.jsonl`` (+ ``.meta.json``) for the rest, every
line's ``cwd`` naming its repository.

What is measured:

- ``ingest_mb_per_s``: MB of transcripts ÷ seconds for ``ingest()`` (walk, read, hash,
  plan, git per distinct cwd, stage) plus ``drain_lanes()`` of every lane it staged
  into (capture with redaction, removal of the staged copies).
- ``second_run_s``: a second ``ingest()`` of the same tree (every transcript already
  stored as a record), wall time.
- ``capture_mb_per_s``: bare ``capture()`` of the same bytes and metadata into fresh
  lanes with the same (warmed) scanners — the drain benchmark's capture rate measured
  on this corpus, on this machine, in this run.

Targets: ``second_run_s <= 2`` for 2,000 files; ``ingest_mb_per_s >= 0.8 ×
capture_mb_per_s``. Runs in a fresh temporary ABCD_HOME / ABCD_SOCKET / TMPDIR and
removes it afterwards. Prints a table, then, as its LAST line, one JSON object:
``{"files", "mb", "ingest_mb_per_s", "second_run_s", ...}``.

    .venv/bin/python bench/ingest.py [--files 2000] [--repos 20] [--seed 11]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as c  # noqa: E402

TARGET_SECOND_RUN_S = 2.0
TARGET_RATIO = 0.8
AGENTS_PER_SESSION = 4


def make_repos(base: Path, n: int) -> list[tuple[Path, str]]:
    """``n`` real repositories with distinct root commits (the shared helper makes
    identical roots within one second, so each root is re-made with its own message)."""
    out = []
    for i in range(n):
        path = base / "repos" / f"repo-{i:02d}"
        c.make_repo(path)
        subprocess.run(["git", "commit", "-q", "--amend", "-m", f"root of repo {i}"], cwd=path,
                       check=True, capture_output=True)
        sha = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=path, check=True,
                             capture_output=True, text=True).stdout.strip()
        out.append((path, sha))
    assert len({sha for _, sha in out}) == n, "repositories must have distinct roots"
    return out


def build_tree(base: Path, repos, *, files: int, seed: int) -> tuple[Path, list[tuple[Path, object, int]]]:
    """The projects tree; returns it and [(path, CaptureMeta, repository index)] for the
    capture baseline."""
    import os

    from abcd_daemon.store.meta import CaptureMeta

    projects = base / "projects"
    rng_sizes = c.TranscriptMaker(seed, cwd="/", home="/").rng
    sizes = c.lognormal_sizes(rng_sizes, files, median_bytes=100 * c.KB, p99_bytes=2 * c.MB)
    makers = [c.TranscriptMaker(seed * 1000 + i, cwd=str(repo), home=os.environ.get("HOME", "/root"))
              for i, (repo, _) in enumerate(repos)]
    out = []
    session = ""
    for i, size in enumerate(sizes):
        r = i % len(repos)
        maker = makers[r]
        project = projects / f"-bench-repo-{r:02d}"
        slot = (i // len(repos)) % (AGENTS_PER_SESSION + 1)
        if slot == 0:
            session = maker.session_id()
            path = project / f"{session}.jsonl"
            raw = maker.transcript(size, session=session)
            meta = CaptureMeta(session_id=session, lineage_source="ingest")
        else:
            agent = maker.agent_id()
            path = project / session / "subagents" / f"agent-{agent}.jsonl"
            raw = maker.transcript(size, session=session, agent=agent)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.with_suffix("").with_suffix(".meta.json").write_text(
                json.dumps({"agentType": "general-purpose", "description": "bench"}))
            meta = CaptureMeta(session_id=session, agent_id=agent, agent_type="general-purpose",
                               lineage_source="ingest", spawn_attribution="unattributed")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
        out.append((path, meta, r))
    return projects, out


def capture_baseline(home, items, repos, *, config, scanners) -> float:
    """capture() every transcript into fresh lanes (one per repository). Returns s."""
    from abcd_daemon.store.capture import capture
    from abcd_daemon.store.lane import Lane

    t0 = time.perf_counter()
    for path, meta, r in items:
        root, sha = str(repos[r][0]), repos[r][1]
        lane = Lane(home, hashlib.sha1(f"capture-{sha}".encode()).hexdigest())
        res = capture(lane, Path(path).read_bytes(), meta, scanner=scanners.get(root), config=config,
                      now_ns=time.time_ns())
        assert res.wrote
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--repos", type=int, default=20)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args(argv)

    base, env = c.isolated_env("abcd-bench-ingest-")
    c.apply_env(env)
    try:
        from abcd_daemon.config import Config
        from abcd_daemon.ingest import drain_lanes, ingest
        from abcd_daemon.paths import Home
        from abcd_daemon.queue.scanners import ScannerPool
        from abcd_daemon.store.lane import Lane

        t0 = time.perf_counter()
        repos = make_repos(base, args.repos)
        projects, items = build_tree(base, repos, files=args.files, seed=args.seed)
        sizes = [Path(p).stat().st_size for p, _, _ in items]
        mb = sum(sizes) / c.MB
        print(f"generated {len(items)} transcripts, {mb:.1f} MB, in {time.perf_counter() - t0:.1f} s "
              f"(seed {args.seed}); size p50 {c.median(sizes) / c.KB:.0f} KB, "
              f"p99 {c.percentile(sizes, 99) / c.MB:.2f} MB")
        config, home = Config(), Home(env["ABCD_HOME"])
        scanners = ScannerPool(config, max_age_s=1e9)
        for repo, _ in repos:  # built once, outside the timings (as the drain benchmark does)
            scanners.get(str(repo))

        t0 = time.perf_counter()
        report = ingest(home, [projects], config=config, now_ns=time.time_ns())
        t1 = time.perf_counter()
        drained = drain_lanes([Lane(home, sha) for sha in report.staged_lanes()], scanners=scanners,
                              config=config)
        t2 = time.perf_counter()
        assert len(report.staged) == len(items), f"staged {len(report.staged)} of {len(items)}"
        assert not drained.failed, drained.failed[:1]
        assert len(drained.captured) == len(items)

        t3 = time.perf_counter()
        again = ingest(home, [projects], config=config, now_ns=time.time_ns())
        second = time.perf_counter() - t3
        assert again.staged == [] and again.present == len(items)

        capture_s = capture_baseline(home, items, repos, config=config, scanners=scanners)
        out = {
            "files": len(items),
            "mb": round(mb, 2),
            "ingest_mb_per_s": round(mb / (t2 - t0), 2),
            "second_run_s": round(second, 3),
            "capture_mb_per_s": round(mb / capture_s, 2),
            "ingest_vs_capture": round((mb / (t2 - t0)) / (mb / capture_s), 3),
            "stage_s": round(t1 - t0, 2),
            "drain_s": round(t2 - t1, 2),
            "repos": args.repos,
        }
        verdict = lambda ok: "ok" if ok else "MISSED"  # noqa: E731
        print(c.table([
            ("ingest (stage) s", out["stage_s"], "", ""),
            ("drain s", out["drain_s"], "", ""),
            ("ingest_mb_per_s (stage + drain)", out["ingest_mb_per_s"], "", ""),
            ("capture_mb_per_s (bare capture)", out["capture_mb_per_s"], "", ""),
            ("ingest / capture", out["ingest_vs_capture"], f">= {TARGET_RATIO}",
             verdict(out["ingest_vs_capture"] >= TARGET_RATIO)),
            ("second run s (nothing new)", out["second_run_s"], f"<= {TARGET_SECOND_RUN_S:g}",
             verdict(out["second_run_s"] <= TARGET_SECOND_RUN_S)),
        ], ("measure", "value", "target", "")))
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
