"""Ingest of a JSONL store harness tree (seed 004 layout, generated here): its records
carry no cwd, so the repository is the one containing the files, or a lane that
already knows the session."""

from abcd_daemon.ingest.run import ingest
from abcd_daemon.locate.notes import note_session
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.store.lane import Lane, list_lanes

from ..conftest import make_repo
from .conftest import T0, store_record, write_jsonl


def make_store(dir_, sessions):
    """``sessions``: {session: [agent, …]} → <dir>/<session>.jsonl and
    <dir>/<session>/subagents/agent-<agent>.jsonl, with a boundary record in each main."""
    for session, agents in sessions.items():
        main = [store_record(session, n) for n in range(4)] + [store_record(session, 4, kind="boundary")]
        write_jsonl(dir_ / f"{session}.jsonl", main)
        for agent in agents:
            write_jsonl(dir_ / session / "subagents" / f"agent-{agent}.jsonl",
                        [store_record(session, n, agent=agent) for n in range(3)])


def staged(home):
    return [e for lane in list_lanes(home) for e in list_staged(lane, now_ns=T0, ttl_s=1e12)]


def test_a_store_harness_tree_ingests_into_its_repository_with_subagents_attributed(home, tmp_path, config):
    sha = make_repo(tmp_path / "repo")
    store = tmp_path / "repo" / ".agent" / "transcripts"
    make_store(store, {"sess-1": ["ag-1", "ag-2"], "sess-2": []})
    report = ingest(home, [store], config=config, now_ns=T0)
    entries = staged(home)
    assert {e.root_sha for e in entries} == {sha}
    assert sorted((e.session_id, e.agent_id) for e in entries) == [
        ("sess-1", ""), ("sess-1", "ag-1"), ("sess-1", "ag-2"), ("sess-2", "")]
    subs = [e for e in entries if e.agent_id]
    assert all(e.spawn_attribution == "unattributed" and e.lineage_source == "ingest" for e in subs)
    assert {s.via for s in report.staged} == {"file-location", "session"}
    [row] = report.repositories
    assert (row.sessions, row.main_threads, row.subagents, row.staged) == (2, 2, 2, 4)
    assert ingest(home, [store], config=config, now_ns=T0 + 1).staged == []


def test_a_store_harness_tree_outside_any_repository_is_listed_unowned(home, tmp_path, config):
    make_store(tmp_path / "loose", {"sess-1": ["ag-1"]})
    report = ingest(home, [tmp_path / "loose"], config=config, now_ns=T0)
    assert staged(home) == []
    assert [(x.session_id, x.agent_id) for x in report.unowned] == [("sess-1", ""), ("sess-1", "ag-1")]
    assert "its records carry no cwd" in report.unowned[0].detail


def test_a_store_harness_session_known_to_a_lane_is_placed_there(home, tmp_path, config):
    sha = make_repo(tmp_path / "repo")
    note_session(Lane(home, sha), "sess-1", now_ns=T0, ttl_s=1e9)
    make_store(tmp_path / "loose", {"sess-1": ["ag-1"]})
    report = ingest(home, [tmp_path / "loose"], config=config, now_ns=T0)
    assert {(e.root_sha, e.agent_id) for e in staged(home)} == {(sha, ""), (sha, "ag-1")}
    assert report.unowned == []
