"""The search index over real sessions: what it finds, what it counts, how it heals."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from abcd_daemon.index.db import connect, index_path, rebuild, sync
from abcd_daemon.index.query import Filters, search
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.store.lane import Lane

from ..reconstruct.real import store_session as _store_session
from ..reconstruct.test_real_sessions import REAL, SESSION


def _lane(home, repo, fixtures_dir) -> Lane:
    _, sha = repo
    lane = Lane(home, sha)
    assert _store_session(lane, fixtures_dir / REAL / f"{SESSION}.jsonl") == SESSION
    return lane


def _tokens(conn, session: str) -> tuple[int, int, int, int]:
    return conn.execute("SELECT sum(input), sum(output), sum(cache_creation), sum(cache_read) FROM responses"
                        " WHERE session_id = ?", (session,)).fetchone()


def test_search_finds_main_thread_and_subagent_turns_and_names_where(home, repo, fixtures_dir):
    lane = _lane(home, repo, fixtures_dir)
    conn = connect(home)
    indexed, _ = sync(conn, home)
    assert indexed >= 2  # the main thread and its sub-agents
    threads = {r[0] for r in conn.execute("SELECT DISTINCT thread FROM turns WHERE session_id = ?", (SESSION,))}
    assert "" in threads and len(threads) >= 2
    word = conn.execute("SELECT text FROM turn_text JOIN turns t ON t.id = turn_text.rowid "
                        "WHERE t.thread != '' LIMIT 1").fetchone()[0].split()[0]
    hits = search(conn, word, Filters(roots=(lane.root_sha,), limit=50))
    assert hits and all(h.session_id == SESSION and h.turn >= 1 for h in hits)
    assert any(h.thread != "main" for h in hits)
    assert all("[" in h.snippet for h in hits)
    only_main = search(conn, word, Filters(agent_type="main", limit=50))
    assert all(h.thread == "main" for h in only_main)


def test_usage_rows_equal_the_telemetry_token_totals(home, repo, fixtures_dir):
    lane = _lane(home, repo, fixtures_dir)
    conn = connect(home)
    sync(conn, home)
    r = reconstruct(lane, ReconstructOptions(session_id=SESSION), now_ns=1)
    t = r.telemetry.tokens
    assert _tokens(conn, SESSION) == (t.input, t.output, t.cache_creation_input, t.cache_read_input)


def test_a_query_that_is_not_fts_syntax_is_searched_as_plain_words(home, repo, fixtures_dir):
    _lane(home, repo, fixtures_dir)
    conn = connect(home)
    sync(conn, home)
    for query in ('"unclosed phrase', "foo(bar", "a AND", "NEAR(", "*", ")"):
        search(conn, query)  # never raises
    assert search(conn, "   ") == []


def test_role_and_tool_filters_narrow_the_hits(home, repo, fixtures_dir):
    _lane(home, repo, fixtures_dir)
    conn = connect(home)
    sync(conn, home)
    tool = conn.execute("SELECT tools FROM turns WHERE tools != '' LIMIT 1").fetchone()[0].split()[0]
    hits = search(conn, tool, Filters(tool=tool, limit=100))
    assert hits
    assert {h.role for h in search(conn, tool, Filters(role="tool", limit=100))} <= {"tool"}


def test_sync_repairs_what_changed_on_disk(home, repo, fixtures_dir):
    lane = _lane(home, repo, fixtures_dir)
    conn = connect(home)
    sync(conn, home)
    names = [p.name for p in sorted(lane.records.iterdir())]
    (lane.records / names[-1]).unlink()  # a record forgotten while the index was not looking
    indexed, dropped = sync(conn, home)
    assert (indexed, dropped) == (0, 1)
    assert conn.execute("SELECT count(*) FROM records").fetchone()[0] == len(names) - 1
    assert conn.execute("SELECT count(*) FROM turns WHERE record = ?", (names[-1],)).fetchone()[0] == 0
    assert sync(conn, home) == (0, 0)  # level: nothing to do


def test_a_damaged_index_is_rebuilt_not_trusted_and_is_owner_only(home, repo, fixtures_dir):
    _lane(home, repo, fixtures_dir)
    rebuild(home)
    path = index_path(home)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    for suffix in ("-wal", "-shm"):
        Path(path + suffix).unlink(missing_ok=True)
    Path(path).write_bytes(b"this is not a database" * 100)
    conn = connect(home)
    assert conn.execute("SELECT count(*) FROM records").fetchone()[0] == 0
    indexed, _ = sync(conn, home)
    assert indexed >= 2 and search(conn, "the")


def test_a_kill_during_indexing_leaves_an_index_the_next_sync_completes(home, repo, fixtures_dir, abcd_env):
    """A real process is killed mid-sync; the survivor's index is consistent (every
    record either fully indexed or absent) and the next sync completes it."""
    _lane(home, repo, fixtures_dir)
    code = ("import os, signal, sys\n"
            "from abcd_daemon.paths import Home\n"
            "from abcd_daemon.index import db\n"
            "home = Home(sys.argv[1])\n"
            "conn = db.connect(home)\n"
            "db.BATCH_BYTES = 1  # commit after every record\n"
            "def progress(done, total):\n"
            "    if done == 1: os.kill(os.getpid(), signal.SIGKILL)\n"
            "db.sync(conn, home, progress)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(home.root)], capture_output=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == -9, proc.stderr
    conn = connect(home)
    partial = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    assert partial == 1  # the committed batch survives, whole
    orphan = conn.execute("SELECT count(*) FROM turns WHERE record NOT IN (SELECT name FROM records)").fetchone()[0]
    assert orphan == 0
    indexed, _ = sync(conn, home)
    assert indexed >= 1 and conn.execute("SELECT count(*) FROM records").fetchone()[0] == partial + indexed


def test_abcd_search_prints_json_hits_in_a_real_process(home, repo, fixtures_dir, abcd_env):
    _lane(home, repo, fixtures_dir)
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-m", "abcd_client", "search", "the", "--all-repos", "--json",
                          "--limit", "3"], capture_output=True, env=env, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["hits"]) == 3 and {"session_id", "thread", "turn", "snippet"} <= set(doc["hits"][0])
    bad = subprocess.run([sys.executable, "-m", "abcd_client", "search", "x", "--all-repos", "--role", "robot"],
                         capture_output=True, env=env, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert bad.returncode != 0 and b"--role" in bad.stderr and b"Traceback" not in bad.stderr


def test_usage_by_agent_type_splits_a_session_and_sums_to_its_telemetry(home, repo, fixtures_dir):
    from abcd_daemon.index.pricing import Pricing
    from abcd_daemon.index.usage import report

    lane = _lane(home, repo, fixtures_dir)
    conn = connect(home)
    sync(conn, home)
    rep = report(conn, "agent-type", Pricing())
    keys = [r.key for r in rep.rows]
    assert "main" in keys and len(keys) >= 2
    t = reconstruct(lane, ReconstructOptions(session_id=SESSION), now_ns=1).telemetry.tokens
    assert sum(r.total for r in rep.rows) == t.input + t.output + t.cache_creation_input + t.cache_read_input
    daily = report(conn, "daily", Pricing())
    assert sum(r.total for r in daily.rows) == sum(r.total for r in rep.rows)


def test_a_model_missing_from_the_price_table_is_named_never_priced_at_zero():
    from abcd_daemon.index.pricing import Pricing

    p = Pricing()
    assert p.cost("claude-sonnet-4-5-20250929", 100_000, 1_000_000, 0, 0) == 0.3 + 15.0
    assert p.cost("claude-sonnet-4-5", 300_000, 0, 0, 0) == 300_000 * 6.0 / 1e6  # long-context tier
    assert p.cost("gpt-9-turbo", 10, 10, 0, 0) is None
    assert Pricing({"gpt-9-turbo": {"input": 1, "output": 2, "cache_write": 0, "cache_read": 0}}).cost(
        "gpt-9-turbo", 1_000_000, 1_000_000, 0, 0) == 3.0


def test_abcd_usage_reports_in_a_real_process(home, repo, fixtures_dir, abcd_env):
    _lane(home, repo, fixtures_dir)
    cwd = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-m", "abcd_client", "usage", "model", "--all-repos", "--json",
                          "--breakdown"], capture_output=True, timeout=120, cwd=cwd)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["rows"] and doc["pricing_as_of"] and all("models" in r for r in doc["rows"])
    text = subprocess.run([sys.executable, "-m", "abcd_client", "usage", "daily", "--all-repos"],
                          capture_output=True, timeout=120, cwd=cwd)
    assert text.returncode == 0 and b"cost USD" in text.stdout and b"prices as of" in text.stdout
    bad = subprocess.run([sys.executable, "-m", "abcd_client", "usage", "hourly", "--all-repos"],
                         capture_output=True, timeout=120, cwd=cwd)
    assert bad.returncode != 0 and b"hourly" in bad.stderr and b"Traceback" not in bad.stderr


def test_usage_per_session_equals_an_independent_counter_on_every_real_session(home, repo):
    """``abcd usage session``'s figures, session by session, against tokens counted
    from the files alone (``tests/reconstruct/real.py``, no reconstruct code)."""
    from abcd_daemon.index.pricing import Pricing
    from abcd_daemon.index.usage import report

    from ..reconstruct.real import independent_tokens, main_threads

    lane = Lane(home, repo[1])
    expected = {}
    for main in main_threads():
        session = _store_session(lane, main)
        expected[session] = independent_tokens(main)
    conn = connect(home)
    sync(conn, home)
    rows = {r.key: r for r in report(conn, "session", Pricing()).rows}
    for session, want in expected.items():
        if not want["api_responses"] and not sum(want[k] for k in ("input", "output")):
            continue
        got = rows[session]
        assert (got.input, got.output, got.cache_creation, got.cache_read) == (
            want["input"], want["output"], want["cache_creation_input"], want["cache_read_input"]), session


def test_pricing_overrides_come_from_config_toml_and_bad_ones_name_the_key():
    import pytest

    from abcd_daemon.config import parse_config
    from abcd_daemon.errors import InputError
    from abcd_daemon.index.pricing import Pricing

    cfg = parse_config('[pricing."acme-1"]\ninput = 1\noutput = 2\ncache_write = 0\ncache_read = 0\n')
    assert Pricing(dict(cfg.pricing)).cost_of_sums("acme-1-20260101", False, 10**6, 10**6, 0, 0) == 3.0
    with pytest.raises(InputError, match="output"):
        parse_config('[pricing."acme-1"]\ninput = 1\ncache_write = 0\ncache_read = 0\n')


def test_a_query_matching_more_turns_than_the_window_is_ranked_among_its_newest_matches(home, repo, fixtures_dir):
    _lane(home, repo, fixtures_dir)
    conn = connect(home)
    sync(conn, home)
    ids = [r[0] for r in conn.execute("SELECT rowid FROM turn_text WHERE turn_text MATCH 'the' ORDER BY rowid DESC")]
    assert len(ids) > 20
    newest = {conn.execute("SELECT turn, session_id FROM turns WHERE id = ?", (i,)).fetchone() for i in ids[:5]}
    windowed = search(conn, "the", Filters(window=5, limit=50))
    assert {(h.turn, h.session_id) for h in windowed} == newest
    assert len(search(conn, "the", Filters(window=0, limit=50))) == min(50, len(ids))
    times = [conn.execute("SELECT r.captured_at FROM turns t JOIN records r ON r.name = t.record WHERE t.id = ?",
                          (i,)).fetchone()[0] for i in (ids[0], ids[-1])]
    from abcd_daemon.store.record import parse_rfc3339_ns

    assert parse_rfc3339_ns(times[0]) >= parse_rfc3339_ns(times[1])  # ids grow with the records' capture time


def test_a_record_the_index_cannot_hold_is_left_out_and_the_sync_goes_on(home, repo, tmp_path):
    """A time past 2262 (no 64-bit nanosecond count holds it) reads as "no time"; a
    record whose rows collide with another lane's (the same file in two lanes) is
    left out alone — neither stops the records after it from being indexed."""
    from ..conftest import make_repo
    from ..reconstruct.real import store

    one, two = Lane(home, repo[1]), Lane(home, make_repo(tmp_path / "other", message="other root"))
    far = {"type": "user", "uuid": "u1", "timestamp": "9999-12-31T23:59:59Z",
           "message": {"role": "user", "content": "a prompt from the far future"}}
    store(one, "far-future", json.dumps(far).encode() + b"\n", captured_ns=1_790_000_000 * 10**9)
    twin = store(one, "twin", json.dumps(dict(far, timestamp="2026-01-01T00:00:00Z")).encode() + b"\n",
                 captured_ns=1_790_000_001 * 10**9)
    from abcd_daemon.store.record import record_filename

    two.ensure("records")
    name = record_filename(twin)
    (two.records / name).write_bytes((one.records / name).read_bytes())
    store(two, "after-the-twin", json.dumps(dict(far, timestamp="2026-01-02T00:00:00Z")).encode() + b"\n",
          captured_ns=1_790_000_002 * 10**9)
    conn = connect(home)
    sync(conn, home)
    hits = {h.session_id: h.when for h in search(conn, "future", Filters(limit=10))}
    assert hits == {"far-future": "", "twin": "2026-01-01 00:00:00", "after-the-twin": "2026-01-02 00:00:00"}
    assert sorted(r[0] for r in conn.execute("SELECT session_id FROM records")) == [
        "after-the-twin", "far-future", "twin"]  # the twin once: the second lane's copy is left out
    owner = "SELECT root FROM records WHERE session_id = 'twin'"
    [(first,)] = conn.execute(owner).fetchall()
    assert sync(conn, home) == (0, 0)  # the copy another lane holds is not tried again
    for lane in (one, two):  # nor taken over by a sync of one lane
        sync(conn, home, lanes=[lane])
        assert conn.execute(owner).fetchall() == [(first,)]


def test_a_tool_call_is_found_by_the_words_of_its_input_not_its_json_escapes(home, repo):
    from ..reconstruct.real import store

    lane = Lane(home, repo[1])
    call = {"type": "assistant", "uuid": "a1", "timestamp": "2026-11-30T10:00:00Z",
            "message": {"id": "msg_1", "model": "claude-sonnet-4-5", "role": "assistant",
                        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                     "input": {"command": "cd repo\nmakepkg --clean", "timeout": 5}}]}}
    store(lane, "tool-words", json.dumps(call).encode() + b"\n", captured_ns=1_790_000_000 * 10**9)
    conn = connect(home)
    sync(conn, home)
    hits = search(conn, "makepkg", Filters(tool="Bash"))
    assert [(h.session_id, h.role) for h in hits] == [("tool-words", "assistant")]
    assert search(conn, "nmakepkg") == []  # "\n" is a line break, never glued to the word after it


def test_a_body_read_lean_gives_the_rows_loading_it_whole_gives():
    """Issue 16: the index reads a record of any size lean and makes its rows as it
    writes them; on every real session they are the rows of the whole-body read."""
    from abcd_daemon.index.derive import derive, derive_lean
    from abcd_daemon.reconstruct.lean import InMemoryBody
    from abcd_daemon.store.record import Record

    from ..reconstruct.real import agent_files, main_threads

    files = [f for main in main_threads() for f in (main, *agent_files(main))]
    assert len(files) >= 40
    for path in files:
        body = path.read_bytes()
        rec = Record(session_id="s", root_commit="a" * 40, source_sha256="0" * 64, name=path.name)
        whole, lean = derive(rec, body), derive_lean(rec, InMemoryBody(body))
        assert list(lean.turns) == whole.turns, path
        assert lean.responses == whole.responses, path


def test_sync_indexes_a_record_over_the_streaming_threshold(home, repo, fixtures_dir, monkeypatch):
    from abcd_daemon.index import db

    _lane(home, repo, fixtures_dir)
    rows = "SELECT record, turn, role, tools, text FROM turns JOIN turn_text ON turn_text.rowid = turns.id ORDER BY id"
    monkeypatch.setattr(db, "STREAM_ABOVE", 0)  # every record is read lean
    conn = connect(home)
    sync(conn, home)
    lean_rows = conn.execute(rows).fetchall()
    lean_usage = _tokens(conn, SESSION)
    monkeypatch.setattr(db, "STREAM_ABOVE", 1 << 40)
    rebuild(home)
    assert conn.execute(rows).fetchall() == lean_rows and len(lean_rows) > 100
    assert _tokens(conn, SESSION) == lean_usage


def test_turns_ranked_equal_are_listed_oldest_first_and_a_limit_keeps_the_oldest(home, repo):
    """The same prompt in three sessions scores the same: the hits come in the turns'
    time order (not the order the records were captured in), with a filter or none."""
    from ..reconstruct.real import store

    lane = Lane(home, repo[1])
    for n, (session, day) in enumerate((("newest", "03"), ("middle", "02"), ("oldest", "01"))):
        line = {"type": "user", "uuid": f"u{n}", "timestamp": f"2026-11-{day}T10:00:00Z",
                "message": {"role": "user", "content": "a prompt about zebras"}}
        store(lane, session, json.dumps(line).encode() + b"\n", captured_ns=(1_790_000_000 + n) * 10**9)
    conn = connect(home)
    sync(conn, home)
    for f in (Filters(limit=2), Filters(limit=2, role="user")):
        hits = search(conn, "zebras", f)
        assert [h.session_id for h in hits] == ["oldest", "middle"], f
        assert len({h.score for h in hits}) == 1 and all("[zebras]" in h.snippet for h in hits)


def test_each_hit_carries_the_snippet_fts5_makes_for_its_turn_alone_in_rank_order(home, repo):
    """The hits' snippets are made in one pass over the ranked turns' span: each one
    is the snippet FTS5 makes for that turn looked up by itself, in rank order, and a
    turn a sync dropped after the ranking is left out."""
    from abcd_daemon.index import query

    from ..reconstruct.real import store

    lane = Lane(home, repo[1])
    filler = " ".join(f"word{i}" for i in range(60))
    for n in range(12):  # the word at different depths and counts: different scores and snippets
        text = f"{filler} " * (n % 4) + "the heron " * (1 + n % 3) + filler
        line = {"type": "user", "uuid": f"u{n}", "timestamp": f"2026-11-{n + 1:02d}T10:00:00Z",
                "message": {"role": "user", "content": text}}
        store(lane, f"s{n:02d}", json.dumps(line).encode() + b"\n", captured_ns=(1_790_000_000 + n) * 10**9)
    conn = connect(home)
    sync(conn, home)
    hits = search(conn, "heron", Filters(limit=8))
    assert len(hits) == 8
    assert [h.score for h in hits] == sorted(h.score for h in hits)
    for h in hits:
        [(alone,)] = conn.execute(
            "SELECT snippet(turn_text, 0, '[', ']', '…', 16) FROM turn_text JOIN turns t ON t.id = turn_text.rowid"
            " WHERE turn_text MATCH 'heron' AND t.session_id = ? AND t.turn = ?", (h.session_id, h.turn)).fetchall()
        assert h.snippet == alone.replace("\n", " ") and "[heron]" in h.snippet
    ranked = conn.execute("SELECT rowid, bm25(turn_text) FROM turn_text WHERE turn_text MATCH 'heron'"
                          " ORDER BY bm25(turn_text) LIMIT 3").fetchall()
    gone = ranked[1][0] + 10_000  # a turn ranked, then dropped by a sync
    kept = query._hits(conn, "heron", [ranked[0], (gone, ranked[1][1]), ranked[2]])
    assert [h.score for h in kept] == [round(ranked[0][1], 3), round(ranked[2][1], 3)]


def test_an_update_applies_the_named_record_files_alone_without_listing_the_directory(home, repo, monkeypatch):
    """The drain's update: told which files it stored and superseded, it indexes the
    new one and drops the retired one, a ``stat`` each; a file it is not told of waits
    for the next full sync (the start-up repair), which still finds it."""
    from abcd_daemon.index import db
    from abcd_daemon.store.record import record_filename

    from ..reconstruct.real import store

    lane = Lane(home, repo[1])

    def prompt(session: str, words: str, at: int):
        line = {"type": "user", "uuid": "u1", "timestamp": "2026-11-30T10:00:00Z",
                "message": {"role": "user", "content": words}}
        return record_filename(store(lane, session, json.dumps(line).encode() + b"\n",
                                     captured_ns=(1_790_000_000 + at) * 10**9))

    old = prompt("s1", "a marmosetvalley prompt", 0)
    conn = connect(home)
    assert sync(conn, home) == (1, 0)

    def no_listing(_lane):
        raise AssertionError("the update listed the records directory")

    monkeypatch.setattr(db, "scan_files", no_listing)
    new = prompt("s1", "a marmosetvalley prompt and a quokkaridge answer", 1)
    (lane.records / old).unlink()  # superseded by the new one
    unnamed = prompt("s2", "a wombatfjord nobody named", 2)
    assert db.update(conn, lane, [new, old]) == (1, 1)
    assert [h.session_id for h in search(conn, "quokkaridge")] == ["s1"]
    assert sorted(r[0] for r in conn.execute("SELECT name FROM records")) == [new]
    assert search(conn, "wombatfjord") == []
    assert db.update(conn, lane, [new]) == (0, 0)  # level: nothing to do
    (lane.records / new).write_bytes(b"no longer a record")  # unreadable: its rows go
    assert db.update(conn, lane, [new, "../escape.md", ".hidden.md", "nul\0byte.md"]) == (0, 1)
    monkeypatch.undo()
    assert sync(conn, home) == (1, 0)  # the full sync finds the file nobody named
    assert [h.session_id for h in search(conn, "wombatfjord")] == ["s2"]


def test_an_update_leaves_a_record_name_another_lane_holds_to_that_lane(home, repo, tmp_path):
    from abcd_daemon.index import db
    from abcd_daemon.store.record import record_filename

    from ..conftest import make_repo
    from ..reconstruct.real import store

    one, two = Lane(home, repo[1]), Lane(home, make_repo(tmp_path / "other", message="other root"))
    line = {"type": "user", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "a twin prompt"}}
    name = record_filename(store(one, "twin", json.dumps(line).encode() + b"\n", captured_ns=1_790_000_000 * 10**9))
    conn = connect(home)
    sync(conn, home)
    two.ensure("records")
    (two.records / name).write_bytes((one.records / name).read_bytes())
    assert db.update(conn, two, [name]) == (0, 0)
    (two.records / name).unlink()
    assert db.update(conn, two, [name]) == (0, 0)  # gone from the other lane: the first keeps its rows
    assert conn.execute("SELECT root FROM records").fetchall() == [(one.root_sha,)]


def test_a_bulk_build_into_an_empty_index_stores_the_same_rows_and_every_index(home, repo, fixtures_dir, monkeypatch):
    """A bulk build into an empty index creates the lookup indexes after its rows
    (rows.bulk): it ends with every index of the schema and the rows a row-by-row
    build stores; an index a killed build left dropped is back at the next connect."""
    from abcd_daemon.index import db
    from abcd_daemon.index.schema import DEFERRED_INDEXES, TABLES

    _lane(home, repo, fixtures_dir)

    def build(bulk_above: int):
        monkeypatch.setattr(db, "BULK_BYTES", bulk_above)
        rebuild(home)
        conn = connect(home)
        try:
            indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
            rows = {t: conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in TABLES if t != "turn_text"}
            rows["turn_text"] = conn.execute("SELECT rowid, text FROM turn_text ORDER BY rowid").fetchall()
            return indexes, rows
        finally:
            conn.close()

    plain_indexes, plain_rows = build(1 << 62)
    bulk_indexes, bulk_rows = build(0)
    assert set(DEFERRED_INDEXES) <= bulk_indexes == plain_indexes
    assert bulk_rows == plain_rows and bulk_rows["turns"]
    conn = connect(home)
    for name in DEFERRED_INDEXES:  # as a build killed between its drops and creates leaves them
        conn.execute(f"DROP INDEX {name}")
    conn.close()
    conn = connect(home)
    assert set(DEFERRED_INDEXES) <= {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    conn.close()
