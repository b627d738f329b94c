"""After serving a large reconstruct, the daemon gives the memory back: its resident set
returns near what it was before (measured on this machine: ~44 MiB before; three 30 MB
reconstructs left it at ~103 MiB with glibc's default thresholds, ~49 MiB with
:mod:`abcd_daemon.server.memory`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import format_record

from ..conftest import make_repo
from ..reconstruct.support import CC, record, usage
from .procs import DaemonProc, env_for, wait_for

SESSION = "5a9221e2-0000-4000-8000-0000000e3e3e"
#: What a large reply may leave behind for good: allocator slack, caches, nothing more.
SLACK = 24 << 20


def rss(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def store_session(lane: Lane, session: str, turns: int, size: int) -> None:
    lane.ensure("records")
    cc = CC(session=session)
    for i in range(turns):
        cc.user(f"turn {i} " + "q" * size).say(f"m{i}", f"answer {i} " + "a" * size, usage=usage())
    rec, body = record(cc.body(), session=session)
    rec.root_commit = lane.root_sha
    (lane.records / rec.name).write_bytes(format_record(rec, body))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/status")
def test_rss_returns_near_its_size_before_after_serving_large_reconstructs(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    store_session(lane, "small-session", 3, 100)
    store_session(lane, SESSION, 3000, 5000)  # ~30 MB of transcript
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        def reconstruct(session: str, out: Path) -> None:
            out.mkdir()
            res = subprocess.run([sys.executable, "-m", "abcd_client", "history", "reconstruct",
                                  session, "--out", str(out), "--max-block-bytes", "0"],
                                 env=env, cwd=repo, capture_output=True, text=True, timeout=300)
            assert res.returncode == 0, res.stderr

        reconstruct("small-session", tmp_path / "warm")  # loads the reconstruct code once
        before = rss(daemon.proc.pid)
        for i in range(3):
            reconstruct(SESSION, tmp_path / f"big{i}")
            assert (tmp_path / f"big{i}" / f"{SESSION}.md").stat().st_size > 25 << 20
            # The trim runs once the reply is sent: wait for it, then hold the bound.
            wait_for(lambda: rss(daemon.proc.pid) < before + SLACK, 20,
                     what=f"RSS back under {(before + SLACK) >> 20} MiB "
                          f"(before {before >> 20} MiB, now {rss(daemon.proc.pid) >> 20} MiB)")
        print(f"\ndaemon RSS before {before >> 20} MiB, after 3 large reconstructs "
              f"{rss(daemon.proc.pid) >> 20} MiB")
    finally:
        assert daemon.stop() == 0
