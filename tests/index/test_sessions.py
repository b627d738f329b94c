"""A repository's session list read from the index alone (the viewer's list), and the
per-thread usage report narrowed to one session (the viewer's bars)."""

from __future__ import annotations

import os

from abcd_daemon.index.db import connect, sync
from abcd_daemon.index.pricing import Pricing
from abcd_daemon.index.sessions import repositories, session_page
from abcd_daemon.index.usage import report
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.store.lane import Lane

from ..reconstruct.real import store_session
from ..web.support import REAL_MAIN, REAL_SESSION, store_many

ROOT = "6" * 40


def _synced(home, n: int):
    home.root.mkdir(mode=0o700, parents=True, exist_ok=True)
    lane = store_many(home, n, ROOT)
    conn = connect(home)
    sync(conn, home)
    return lane, conn


def test_pages_cut_one_newest_first_order_with_no_session_twice_or_left_out(home):
    _, conn = _synced(home, 250)
    pages = [session_page(conn, ROOT, Pricing(), offset=k, limit=100) for k in (0, 100, 200)]
    assert [p.total for p in pages] == [250] * 3
    assert [len(p.sessions) for p in pages] == [100, 100, 50]
    ids = [s.session_id for p in pages for s in p.sessions]
    assert len(set(ids)) == 250
    starts = [s.first_ns for p in pages for s in p.sessions]
    assert starts == sorted(starts, reverse=True) and starts[0] > starts[-1] > 0
    assert session_page(conn, ROOT, Pricing(), offset=250, limit=100).sessions == []


def test_each_row_counts_its_records_and_carries_the_usage_reports_session_row(home):
    _, conn = _synced(home, 30)
    page = session_page(conn, ROOT, Pricing(), offset=0, limit=100)
    rows = {r.key: r for r in report(conn, "session", Pricing(), roots=(ROOT,)).rows}
    assert len(page.sessions) == 30
    for s in page.sessions:
        assert s.agents == 2 and s.last_captured_at
        assert s.last_ns - s.first_ns == 30 * 10**9  # user at +0 s, assistant at +30 s
        assert s.usage is not None
        assert s.usage.as_json(True) == rows[s.session_id].as_json(True)
    k = int(page.sessions[0].session_id[4:8])
    assert page.sessions[0].usage.input == 2 * (100 + k)  # one response per thread


def test_the_list_is_read_from_the_index_without_touching_a_record(home):
    lane, conn = _synced(home, 12)
    before = session_page(conn, ROOT, Pricing())
    hidden = lane.records.with_name("records.away")
    os.rename(lane.records, hidden)
    try:
        assert session_page(conn, ROOT, Pricing()) == before
    finally:
        os.rename(hidden, lane.records)


def test_the_agent_report_of_one_session_splits_its_telemetry_by_thread(home):
    home.root.mkdir(mode=0o700, parents=True, exist_ok=True)
    lane = Lane(home, "7" * 40)
    store_session(lane, REAL_MAIN)
    store_many(home, 3, lane.root_sha)  # other sessions of the same repository
    conn = connect(home)
    sync(conn, home)
    t = reconstruct(lane, ReconstructOptions(session_id=REAL_SESSION), now_ns=1).telemetry
    rep = report(conn, "agent", Pricing(), roots=(lane.root_sha,), session=REAL_SESSION)
    keys = {r.key for r in rep.rows}
    assert keys == {"main" if a.is_main_thread else a.agent_id for a in t.agents if a.tokens.total}
    assert sum(r.total for r in rep.rows) == t.tokens.total
    whole = report(conn, "session", Pricing(), roots=(lane.root_sha,), session=REAL_SESSION).rows
    assert [r.key for r in whole] == [REAL_SESSION]
    assert abs(sum(r.cost_usd for r in rep.rows) - whole[0].cost_usd) < 1e-9


def test_the_repositories_count_their_sessions_newest_capture_first(home):
    _, conn = _synced(home, 5)
    older = Lane(home, "7" * 40)
    store_session(older, REAL_MAIN)  # captured at its transcript's time, before those
    sync(conn, home)
    rows = repositories(conn)
    assert [(r.root, r.sessions) for r in rows] == [(ROOT, 5), (older.root_sha, 1)]
    assert rows[0].last_captured_at > rows[1].last_captured_at
