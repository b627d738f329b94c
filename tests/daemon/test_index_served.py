"""``abcd search``, ``abcd usage`` and ``abcd index rebuild`` served by a real daemon:
the same answers as in-process, records written behind its back are found, and a
``kill -9`` in the middle of indexing leaves an index the next start repairs."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time

from abcd_daemon.index.db import index_path
from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane

from ..conftest import make_repo
from ..reconstruct.real import REAL_PROJECTS, independent_tokens, main_threads, store, store_session
from .procs import DaemonProc, env_for, wait_for


def abcd(env, cwd, *args, local: bool = False) -> subprocess.CompletedProcess:
    run_env = dict(env, ABCD_LOCAL="1") if local else env
    return subprocess.run([sys.executable, "-m", "abcd_client", *args], env=run_env, cwd=cwd,
                          capture_output=True, timeout=300)


def _doc(res: subprocess.CompletedProcess) -> dict:
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _counts(env) -> tuple[int, int, int, int]:
    """(records, turns, orphan turns, orphan responses or text) of the index, read-only."""
    conn = sqlite3.connect(f"file:{index_path(Home(env['ABCD_HOME']))}?mode=ro", uri=True, timeout=30)
    try:
        records = conn.execute("SELECT count(*) FROM records").fetchone()[0]
        turns = conn.execute("SELECT count(*) FROM turns").fetchone()[0]
        orphan_turns = conn.execute(
            "SELECT count(*) FROM turns WHERE record NOT IN (SELECT name FROM records)").fetchone()[0]
        orphan_other = conn.execute(
            "SELECT (SELECT count(*) FROM responses WHERE record NOT IN (SELECT name FROM records))"
            " + (SELECT count(*) FROM turn_text WHERE rowid NOT IN (SELECT id FROM turns))").fetchone()[0]
        return records, turns, orphan_turns, orphan_other
    finally:
        conn.close()


def _indexed(env) -> int:
    try:
        return _counts(env)[0]
    except sqlite3.Error:
        return -1


def _store_fixtures(env, sha) -> dict[str, dict]:
    """Every real fixture session stored in the lane; session → its independent tokens."""
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    return {store_session(lane, main): independent_tokens(main) for main in main_threads()}


def test_search_and_usage_served_by_the_daemon_equal_the_in_process_answers(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    _store_fixtures(env, sha)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        for args in (["search", "the", "--json", "--limit", "25"],
                     ["search", '"tool_use', "--json"],  # not FTS syntax: plain words
                     ["search", "test*", "--role", "assistant", "--json"],
                     ["usage", "session", "--json", "--breakdown"],
                     ["usage", "agent-type", "--all-repos", "--json"]):
            served, local = _doc(abcd(env, repo, *args)), _doc(abcd(env, repo, *args, local=True))
            assert served == local, args
            assert served.get("hits", served.get("rows")), args
        bad = abcd(env, repo, "usage", "hourly")
        assert bad.returncode == 2 and b"hourly" in bad.stderr and b"Traceback" not in bad.stderr
        rebuilt = _doc(abcd(env, repo, "index", "rebuild", "--json"))
        assert rebuilt["indexed"] == len(list(Lane(Home(env["ABCD_HOME"]), sha).records.glob("*.md")))
        assert _doc(abcd(env, repo, "search", "the", "--json", "--limit", "25")) == \
            _doc(abcd(env, repo, "search", "the", "--json", "--limit", "25", local=True))
    finally:
        assert daemon.stop() == 0


def test_a_record_written_behind_the_daemons_back_is_found_by_its_next_search(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    store_session(lane, main_threads()[0])
    old = time.time() - 3600
    os.utime(lane.records, (old, old))  # quiet for an hour: the daemon trusts it as level
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        wait_for(lambda: _indexed(env) > 0, 60, what="the start-up sync")
        assert _doc(abcd(env, repo, "search", "zebraquokka", "--json"))["hits"] == []
        line = {"type": "user", "uuid": "u1", "sessionId": "behind-its-back", "timestamp": "2026-11-30T10:00:00Z",
                "message": {"role": "user", "content": "where is the zebraquokka"}}
        store(lane, "behind-its-back", json.dumps(line).encode() + b"\n", captured_ns=1_790_000_000 * 10**9)
        hits = _doc(abcd(env, repo, "search", "zebraquokka", "--json"))["hits"]
        assert [(h["session_id"], h["thread"], h["role"]) for h in hits] == [("behind-its-back", "main", "user")]
    finally:
        assert daemon.stop() == 0


def test_a_kill_9_of_the_daemon_while_it_indexes_leaves_an_index_its_next_start_repairs(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    biggest = sorted(REAL_PROJECTS.glob("*/*.jsonl"), key=lambda p: p.stat().st_size)[-1]
    body = biggest.read_bytes()
    total = max(48, (64 << 20) // len(body))  # ≥ 64 MB: several index batches
    for i in range(total):
        store(lane, f"kill-{i:04d}", body, captured_ns=1_790_000_000 * 10**9 + i)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        wait_for(lambda: 0 < _indexed(env) < total, 120, interval=0.01, what="a committed batch")
    finally:
        daemon.kill9()
    records, _turns, orphan_turns, orphan_other = _counts(env)
    assert 0 < records < total and orphan_turns == 0 and orphan_other == 0  # whole batches or nothing
    daemon = DaemonProc(env, tmp_path / "d2.log").wait_ready()
    try:
        wait_for(lambda: _indexed(env) == total, 240, what="the repair at start")
        assert _counts(env)[2:] == (0, 0)
        rows = {r["key"]: r for r in _doc(abcd(env, repo, "usage", "session", "--json"))["rows"]}
        assert len(rows) == total
        one = rows["kill-0000"]
        assert all(r["total"] == one["total"] for r in rows.values())  # each counted once, none twice
    finally:
        assert daemon.stop() == 0


def test_after_ingesting_the_real_fixtures_search_and_usage_answer_for_every_repository(tmp_path, fixtures_dir):
    """What a new user does: ingest the harness store, then search and roll up usage —
    served, across repositories, each session's tokens equal to its telemetry."""
    from ..ingest.conftest import build_fixture_tree

    env = env_for(tmp_path)
    tree = build_fixture_tree(tmp_path / "tree", fixtures_dir)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        report = _doc(abcd(env, tmp_path, "history", "ingest", str(tree.root), "--json"))
        assert report["staged"] and report["drain"]["failed"] == []
        hits = _doc(abcd(env, tmp_path, "search", "the", "--all-repos", "--json", "--limit", "200"))["hits"]
        assert len({h["root"] for h in hits}) >= 2  # every repository's lane, sub-agents included
        assert any(h["thread"] != "main" for h in hits)
        repo, _sha = tree.repos["worktrees"]
        rows = _doc(abcd(env, repo, "usage", "session", "--json"))["rows"]
        assert rows
        for row in rows:
            out = tmp_path / "out" / row["key"]
            out.mkdir(parents=True)
            telemetry = _doc(abcd(env, repo, "history", "reconstruct", row["key"], "--out", str(out), "--json"))
            t = telemetry["telemetry"]["tokens"]
            assert (row["input"], row["output"], row["cache_creation"], row["cache_read"]) == (
                t["input"], t["output"], t["cache_creation_input"], t["cache_read_input"]), row["key"]
        daily = _doc(abcd(env, repo, "usage", "daily", "--json"))["rows"]
        assert sum(r["total"] for r in daily) == sum(r["total"] for r in rows)
    finally:
        assert daemon.stop() == 0


def test_a_transcript_the_daemon_drains_is_indexed_and_the_record_it_supersedes_dropped_without_a_search(
        tmp_path):
    """The drain pass tells the index which record files it stored and superseded; the
    index follows without a search (a read would sync a changed lane itself)."""
    from .procs import run_shim

    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    transcript = tmp_path / "projects" / "-repo" / "drained.jsonl"
    transcript.parent.mkdir(parents=True)

    def say(words: str) -> dict:
        line = {"type": "user", "uuid": f"u{words}", "sessionId": "drained", "timestamp": "2026-11-30T10:00:00Z",
                "message": {"role": "user", "content": words}}
        with transcript.open("a") as f:
            f.write(json.dumps(line) + "\n")
        return {"session_id": "drained", "cwd": str(repo), "hook_event_name": "SessionEnd",
                "transcript_path": str(transcript), "reason": "exit"}

    def indexed_names() -> list[str]:
        try:
            conn = sqlite3.connect(f"file:{index_path(Home(env['ABCD_HOME']))}?mode=ro", uri=True, timeout=30)
        except sqlite3.Error:
            return []  # no index yet
        try:
            return sorted(r[0] for r in conn.execute("SELECT name FROM records"))
        except sqlite3.Error:
            return []
        finally:
            conn.close()

    def on_disk() -> list[str]:
        return sorted(p.name for p in lane.records.glob("*.md")) if lane.records.exists() else []

    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        assert run_shim("session-end", say("first"), env).returncode == 0
        wait_for(lambda: len(on_disk()) == 1 and indexed_names() == on_disk(), 60, what="the first record indexed")
        [first] = on_disk()
        assert run_shim("session-end", say("second"), env).returncode == 0  # the same transcript, longer
        wait_for(lambda: on_disk() != [first] and len(on_disk()) == 1 and indexed_names() == on_disk(), 60,
                 what="the longer record indexed, the one it superseded dropped")
    finally:
        assert daemon.stop() == 0


def test_a_session_the_hook_hands_over_is_found_by_a_served_search_as_in_process(tmp_path):
    """The whole path: hook shim → spool → daemon → redaction → record → index → ``abcd
    search`` answered by the daemon (the CLI's JSON client), the same document in-process."""
    from .procs import run_shim

    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    transcript = tmp_path / "projects" / "-repo" / "hooked.jsonl"
    transcript.parent.mkdir(parents=True)
    token = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF2hJ"
    lines = [{"type": "user", "uuid": "u1", "sessionId": "hooked", "timestamp": "2026-12-03T08:00:00Z",
              "message": {"role": "user", "content": f"find the quokkazebra, token {token}"}},
             {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "hooked",
              "timestamp": "2026-12-03T08:00:05Z",
              "message": {"role": "assistant", "content": [{"type": "text", "text": "The quokkazebra is here."}]}}]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        payload = {"session_id": "hooked", "cwd": str(repo), "hook_event_name": "SessionEnd",
                   "transcript_path": str(transcript), "reason": "exit"}
        assert run_shim("session-end", payload, env).returncode == 0
        wait_for(lambda: any(lane.records.glob("*.md")) if lane.records.exists() else False, 60, what="the record")
        served = _doc(abcd(env, repo, "search", "quokkazebra", "--json"))
        assert served == _doc(abcd(env, repo, "search", "quokkazebra", "--json", local=True))
    finally:
        assert daemon.stop() == 0
    hits = served["hits"]
    assert {(h["session_id"], h["role"], h["thread"]) for h in hits} == {("hooked", "user", "main"),
                                                                          ("hooked", "assistant", "main")}
    assert all("[quokkazebra]" in h["snippet"] for h in hits)  # the match highlighted
    assert token[4:] not in json.dumps(served)  # only redacted text is indexed
