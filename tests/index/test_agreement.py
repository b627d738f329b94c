"""The usage roll-ups agree with reconstruct's telemetry and with each other, on every
real fixture session (issue 14, "Agreement")."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

from abcd_daemon.index.db import connect, sync
from abcd_daemon.index.pricing import Pricing
from abcd_daemon.index.usage import report
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.store.lane import Lane

from ..reconstruct.real import sessions, store_session

FIELDS = ("input", "output", "cache_creation", "cache_read")
DAY_NS = 86_400 * 10**9


def _store_all(home, sha) -> tuple[Lane, list[str]]:
    """Every real fixture session stored; the sessions that have a record."""
    from abcd_daemon.store.records import list_records

    lane = Lane(home, sha)
    for main in sessions():
        store_session(lane, main)
    return lane, sorted({r.session_id for r in list_records(lane)})


def test_usage_session_json_equals_reconstruct_telemetry_for_every_real_fixture_session(home, repo):
    """Stored usage equals the telemetry's totals, and copy-only agent_progress usage
    the telemetry's missing agents' (none of the real fixtures has agent_progress
    lines: tests/index/test_copy_only_usage.py builds one)."""
    checkout, sha = repo
    lane, stored = _store_all(home, sha)
    out = subprocess.run([sys.executable, "-m", "abcd_client", "usage", "session", "--json"], cwd=checkout,
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    rows = {r["key"]: r for r in doc["rows"]}
    apart = {r["key"]: r for r in doc["copy_only_agent_progress"]}
    checked = 0
    for session in stored:
        telemetry = reconstruct(lane, ReconstructOptions(session_id=session), now_ns=1).telemetry
        t = telemetry.tokens
        want = (t.input, t.output, t.cache_creation_input, t.cache_read_input)
        row = rows.get(session)
        got = tuple(row[f] for f in FIELDS) if row else (0, 0, 0, 0)
        assert got == want, session
        checked += bool(row)
        copies = [m.progress_tokens for m in telemetry.completeness.missing_agents]
        want = tuple(sum(getattr(k, f) for k in copies) for f in
                     ("input", "output", "cache_creation_input", "cache_read_input"))
        row = apart.get(session)
        assert (tuple(row[f] for f in FIELDS) if row else (0, 0, 0, 0)) == want, session
    assert checked >= 20 and set(rows) <= set(stored)


def test_the_daily_report_equals_the_sum_of_its_sessions_day_by_day(home, repo):
    _lane, stored = _store_all(home, repo[1])
    conn = connect(home)
    sync(conn, home)
    pricing = Pricing()
    daily = report(conn, "daily", pricing)
    by_session = report(conn, "session", pricing)
    assert len(daily.rows) >= 2

    def sums(rows):
        return tuple(sum(getattr(r, f) for r in rows) for f in FIELDS) + (round(sum(r.cost_usd for r in rows), 6),)

    assert sums(daily.rows) == sums(by_session.rows)
    for day in daily.rows:
        if day.key == "(no time)":
            continue
        start = int(dt.datetime.fromisoformat(day.key + "T00:00:00+00:00").timestamp()) * 10**9
        sessions_that_day = report(conn, "session", pricing, since_ns=start, until_ns=start + DAY_NS).rows
        assert sums([day]) == sums(sessions_that_day), day.key
        assert {r.key for r in sessions_that_day} <= set(stored)


def test_syncing_one_repositorys_lane_keeps_every_other_repositorys_rows(home, repo, tmp_path):
    from ..conftest import make_repo
    from ..reconstruct.real import main_threads

    mains = main_threads()
    one, two = Lane(home, repo[1]), Lane(home, make_repo(tmp_path / "other", message="other root"))
    store_session(one, mains[0])
    store_session(two, mains[1])
    conn = connect(home)
    sync(conn, home)
    before = dict(conn.execute("SELECT root, count(*) FROM records GROUP BY root").fetchall())
    assert set(before) == {one.root_sha, two.root_sha}
    assert sync(conn, home, lanes=[one]) == (0, 0)
    assert dict(conn.execute("SELECT root, count(*) FROM records GROUP BY root").fetchall()) == before
    (two.records / sorted(p.name for p in two.records.iterdir() if p.suffix == ".md")[0]).unlink()
    assert sync(conn, home, lanes=[one]) == (0, 0)  # the other lane is not this sync's to judge
    assert sync(conn, home, lanes=[two]) == (0, 1)


def test_turn_times_are_read_as_reconstruct_reads_them():
    from abcd_daemon.index.derive import key_ns
    from abcd_daemon.reconstruct.model import when_ns
    from abcd_daemon.reconstruct.values import when_key

    for stamp in ("2026-04-18T13:22:11.123Z", "2026-04-18T13:22:11+02:00", "1999-12-31T23:59:60Z",
                  "2024-02-29T23:59:59.999999999Z", "1700-01-01T00:00:00Z", "not a time"):
        assert key_ns(when_key(stamp)) == when_ns(when_key(stamp)), stamp
    for stamp in ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"):  # past what SQLite's integers hold
        assert key_ns(when_key(stamp)) == 0, stamp


def test_the_python_day_of_a_response_is_the_sql_day_to_the_character():
    import sqlite3

    from abcd_daemon.index.schema import DAY_SQL, utc_day

    conn = sqlite3.connect(":memory:")
    for ns in (0, 1, 10**9 - 1, -1, -10**9, -10**9 - 1, 86_400 * 10**9 - 1, 1_776_518_531_123_000_000,
               -9_000_000_000_000_000_000, 9_000_000_000_000_000_000):
        sql = conn.execute(f"SELECT {DAY_SQL.replace('when_ns', '?1')}", (ns,)).fetchone()[0]
        assert utc_day(ns) == sql, ns



def test_usage_without_a_time_range_adds_the_per_record_sums_and_equals_every_response_added(home, repo):
    from abcd_daemon.index.values import REPORTS

    _store_all(home, repo[1])
    conn = connect(home)
    sync(conn, home)
    for kind in REPORTS:
        summed = report(conn, kind, Pricing())
        every = report(conn, kind, Pricing(), until_ns=2**62)  # a range: every response row, one by one
        assert [r.as_json(True) for r in summed.rows] == [r.as_json(True) for r in every.rows], kind
        assert summed.unpriced == every.unpriced
