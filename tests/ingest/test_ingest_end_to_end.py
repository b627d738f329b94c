"""Ingest end to end: stage, drain, records — in-process, through the real `abcd`
executable, and through a running daemon (which also watches a root)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from abcd_daemon.ingest import ingest_request
from abcd_daemon.queue.scanners import ScannerPool
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.store.lane import Lane, list_lanes
from abcd_daemon.store.records import list_records, read_body
from abcd_daemon.wire.messages import IngestRequest

from ..conftest import make_repo
from .conftest import T0, claude_line, write_jsonl

ABCD = Path(sys.executable).with_name("abcd")


def all_records(home):
    return [r for lane in list_lanes(home) for r in list_records(lane)]


def run_abcd(*args, env=None, cwd=None):
    res = subprocess.run([str(ABCD), *args], capture_output=True, timeout=300,
                         env=env or dict(os.environ, ABCD_LOCAL="1"), cwd=cwd)
    return res.returncode, res.stdout.decode(), res.stderr.decode()


def test_ingest_then_drain_stores_every_conversation_once_with_its_lineage(home, fixture_tree, config):
    scanners = ScannerPool(config)
    report = ingest_request(home, IngestRequest(roots=[str(fixture_tree.root)]), config=config,
                            scanners=scanners)
    assert report.drain is not None and report.drain.failed == []
    records = all_records(home)
    assert len(records) == len(fixture_tree.conversations()) == 80
    assert len({(r.session_id, r.agent_id) for r in records}) == 80
    assert all(not list_staged(lane, now_ns=T0, ttl_s=1e12) for lane in list_lanes(home))
    subs = [r for r in records if r.agent_id]
    assert len(subs) == 53 and all(r.lineage_source == "ingest" for r in records)
    worktree_subs = [r for r in subs if r.root_commit == fixture_tree.sha("worktrees")]
    assert len(worktree_subs) == 6
    assert {(r.agent_type, r.spawn_attribution) for r in worktree_subs} == {("general-purpose", "unattributed")}
    again = ingest_request(home, IngestRequest(roots=[str(fixture_tree.root)]), config=config,
                           scanners=scanners)
    assert again.staged == [] and again.present == 80 and again.drain is None
    assert len(all_records(home)) == 80


def test_a_longer_transcript_supersedes_its_record(home, tmp_path, config):
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    path = write_jsonl(tmp_path / "projects" / "p" / "s1.jsonl", [claude_line("s1", str(repo), 0)])
    req = IngestRequest(roots=[str(tmp_path / "projects")])
    scanners = ScannerPool(config)
    ingest_request(home, req, config=config, scanners=scanners)
    with open(path, "a") as f:
        f.write(json.dumps(claude_line("s1", str(repo), 1)) + "\n")
    report = ingest_request(home, req, config=config, scanners=scanners)
    assert len(report.staged) == 1
    [record] = list_records(Lane(home, sha))
    assert read_body(Lane(home, sha), record).count(b"\n") == 2


def test_the_cli_ingests_prints_a_summary_table_and_draws_no_bar_when_piped(fixture_tree):
    code, out, err = run_abcd("history", "ingest", str(fixture_tree.root))
    assert code == 0, err
    assert err == ""
    assert "repository" in out and "sub-agents" in out and "present" in out
    assert f"{fixture_tree.sha('coderabbit')[:12]}  coderabbit" in out
    assert "total: 80 staged, 0 already present, 17 empty file(s) ignored" in out
    assert "drained: 80 record(s) stored" in out
    code, out, err = run_abcd("history", "ingest", str(fixture_tree.root), "--json")
    report = json.loads(out)
    assert code == 0 and report["staged"] == [] and report["present"] == 80
    assert {x["reason"] for x in report["skipped"]} == {"not-a-transcript"}


@pytest.mark.slow
def test_the_daemon_serves_ingest_and_stages_a_watched_root(tmp_path):
    from tests.daemon.procs import DaemonProc, env_for, wait_for

    repo = tmp_path / "repo"
    sha = make_repo(repo)
    projects = tmp_path / "projects"
    write_jsonl(projects / "p" / "s1.jsonl", [claude_line("s1", str(repo), 0)])
    watched = tmp_path / "watched"
    watched.mkdir()
    env = env_for(tmp_path)
    Path(env["ABCD_HOME"]).mkdir(parents=True, mode=0o700)
    (Path(env["ABCD_HOME"]) / "config.toml").write_text(
        f'watch_roots = ["{watched}"]\nwatch_settle_s = 0.5\ndrain_interval_s = 1\n')
    daemon = DaemonProc(env, tmp_path / "daemon.log").wait_ready()
    try:
        code, out, err = run_abcd("history", "ingest", str(projects), "--json", env=env)
        assert code == 0, err + daemon.read_log()
        report = json.loads(out)
        assert [s["session_id"] for s in report["staged"]] == ["s1"] and report["drain"]["captured"]
        lane = Lane(__import__("abcd_daemon.paths").paths.Home(env["ABCD_HOME"]), sha)
        write_jsonl(watched / "p" / "s2.jsonl", [claude_line("s2", str(repo), 0)])
        wait_for(lambda: {r.session_id for r in list_records(lane)} == {"s1", "s2"}, timeout=90,
                 what="the watched transcript to be stored")
        code, out, _ = run_abcd("daemon", "status", "--json", env=env)
        [root] = json.loads(out)["watch_roots"]
        assert root["path"] == str(watched) and root["state"] == "watching" and root["staged"] == 1
    finally:
        assert daemon.stop() == 0
