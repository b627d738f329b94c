"""The daemon's hold on the index (``IndexKeeper``): reads re-sync only lanes whose
records changed, and never wait out a long sync."""

from __future__ import annotations

import json
import os
import threading
import time

from abcd_daemon.index import db, keeper
from abcd_daemon.index.keeper import IndexKeeper
from abcd_daemon.index.query import Filters, search
from abcd_daemon.store.lane import Lane

from ..reconstruct.real import main_threads, store, store_session


def _quiet(lane: Lane) -> None:
    old = time.time() - 3600
    os.utime(lane.records, (old, old))


def _count_syncs(monkeypatch) -> list:
    calls = []
    real = db.sync

    def counting(conn, home, progress=None, lanes=None):
        calls.append([lane.root_sha for lane in lanes] if lanes is not None else None)
        return real(conn, home, progress, lanes=lanes)

    monkeypatch.setattr(keeper.db, "sync", counting)
    return calls


def _prompt(lane: Lane, session: str, words: str):
    line = {"type": "user", "uuid": "u1", "timestamp": "2026-11-30T10:00:00Z",
            "message": {"role": "user", "content": words}}
    return store(lane, session, json.dumps(line).encode() + b"\n", captured_ns=1_790_000_000 * 10**9)


def _level_keeper(home, repo, monkeypatch) -> tuple[Lane, list, IndexKeeper]:
    """A lane of one real session, quiet, and a keeper that synced it (its full syncs
    counted)."""
    lane = Lane(home, repo[1])
    store_session(lane, main_threads()[0])
    _quiet(lane)
    calls = _count_syncs(monkeypatch)
    k = IndexKeeper(home)
    k.sync(None)
    assert len(calls) == 1
    return lane, calls, k


def test_a_read_syncs_a_lane_only_when_its_records_changed(home, repo, monkeypatch):
    lane, calls, k = _level_keeper(home, repo, monkeypatch)
    for _ in range(3):  # quiet: one stat each, no sync
        assert k.read((lane.root_sha,), lambda conn: search(conn, "the", Filters(limit=1)))
    assert len(calls) == 1
    _prompt(lane, "later", "an ocelotbadger appears")
    assert [h.session_id for h in k.read((), lambda conn: search(conn, "ocelotbadger"))] == ["later"]
    assert calls[1:] == [[lane.root_sha]]
    k.close()


def test_a_read_answers_from_what_is_indexed_while_another_thread_holds_a_long_sync(home, repo, monkeypatch):
    lane = Lane(home, repo[1])
    _prompt(lane, "first", "the first wombatheron")
    k = IndexKeeper(home)
    k.sync(None)
    _prompt(lane, "second", "the second wombatheron")  # not indexed yet: its lane is stale
    monkeypatch.setattr(keeper, "WAIT_S", 0.2)
    held, release = threading.Event(), threading.Event()

    def long_sync():
        with k._write:
            held.set()
            release.wait(30)

    t = threading.Thread(target=long_sync)
    t.start()
    try:
        held.wait(10)
        started = time.monotonic()
        hits = k.read((), lambda conn: search(conn, "wombatheron"))
        assert time.monotonic() - started < 5
        assert [h.session_id for h in hits] == ["first"]
    finally:
        release.set()
        t.join()
    assert {h.session_id for h in k.read((), lambda conn: search(conn, "wombatheron"))} == {"first", "second"}
    k.close()


def test_a_served_search_or_usage_naming_a_path_for_a_repository_is_refused_as_bad_input(home):
    from abcd_daemon.config import Config
    from abcd_daemon.server.handlers import Handlers
    from abcd_daemon.wire import messages as m

    os.makedirs(home.root, mode=0o700, exist_ok=True)
    h = Handlers(home, Config(), None, drain_lock=threading.Lock(), index=IndexKeeper(home))
    for req in (m.SearchRequest(query="x", roots=["../../etc"]), m.UsageRequest(kind="daily", roots=["/tmp"]),
                m.SearchRequest(query="x", role="robot"), m.UsageRequest(kind="hourly")):
        reply, _ = h.handle(req)
        assert isinstance(reply, m.ErrorReply) and reply.kind == "InputError" and reply.exit_code == 2, req
    reply, _ = h.handle(m.SearchRequest(query='"unclosed (phrase'))  # not FTS syntax: plain words, no error
    assert isinstance(reply, m.SearchReply)


def test_a_drain_update_indexes_its_files_and_a_read_still_syncs_what_was_written_behind_its_back(
        home, repo, monkeypatch):
    from abcd_daemon.store.record import record_filename

    lane, calls, k = _level_keeper(home, repo, monkeypatch)
    assert k.read((), lambda conn: search(conn, "the", Filters(limit=1)))  # level: no sync
    drained = _prompt(lane, "drained", "a capybaraloch prompt")
    _prompt(lane, "behind", "an ocelotbadger appears")  # not named to the update
    assert k.update({lane.root_sha: [record_filename(drained)]}) == (1, 0)
    assert len(calls) == 1  # no full sync for the drain's update
    assert [h.session_id for h in k.read((), lambda conn: search(conn, "capybaraloch"))] == ["drained"]
    assert calls[1:] == [[lane.root_sha]]  # the lane changed since it was level: synced once
    assert [h.session_id for h in k.read((), lambda conn: search(conn, "ocelotbadger"))] == ["behind"]
    k.close()
