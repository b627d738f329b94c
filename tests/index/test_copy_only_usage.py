"""Usage known only from ``agent_progress`` copies (a sub-agent whose transcript is not
stored) is reported apart from stored usage, with reconstruct's figures, and never
counted together with an agent whose record is stored."""

from __future__ import annotations

import json
import subprocess
import sys

from abcd_daemon.index.db import connect, sync
from abcd_daemon.index.pricing import Pricing
from abcd_daemon.index.usage import report
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import format_record

from ..reconstruct.support import SESSION, lost_agent_session

FIELDS = ("input", "output", "cache_creation", "cache_read")


def _session():
    """(main, kept1) of :func:`lost_agent_session`, kept1's type recorded."""
    return lost_agent_session(agent_type="Explore")


def _store(lane: Lane, rec, body) -> None:
    rec.root_commit = lane.root_sha
    lane.ensure("records")
    (lane.records / rec.name).write_bytes(format_record(rec, body))


def _figures(row) -> tuple[int, ...]:
    return tuple(getattr(row, f) for f in FIELDS)


def test_copy_only_usage_is_apart_with_reconstructs_figures_and_a_stored_agents_copies_count_nowhere(home, repo):
    lane = Lane(home, repo[1])
    main, kept = _session()
    _store(lane, *main)
    _store(lane, *kept)
    conn = connect(home)
    sync(conn, home)
    t = reconstruct(lane, ReconstructOptions(session_id=SESSION), now_ns=1).telemetry
    [lost] = t.completeness.missing_agents
    k = lost.progress_tokens
    rep = report(conn, "session", Pricing())
    [row], [apart] = rep.rows, rep.apart
    assert row.key == apart.key == SESSION
    assert _figures(row) == (t.tokens.input, t.tokens.output, t.tokens.cache_creation_input,
                             t.tokens.cache_read_input) == (9, 9, 9, 9)  # kept1's copy is not in it
    assert _figures(apart) == (k.input, k.output, k.cache_creation_input, k.cache_read_input) == (12, 73, 104, 1005)
    assert apart.responses == k.api_responses == 2
    assert apart.cost_usd > 0 and "claude-opus-4-7" in apart.models
    by_type = report(conn, "agent-type", Pricing())
    assert {r.key: _figures(r) for r in by_type.apart} == {"Plan": (12, 73, 104, 1005)}
    assert {r.key for r in by_type.rows} == {"main", "Explore"}
    daily = report(conn, "daily", Pricing())
    assert [r.key for r in daily.apart] == ["2026-01-01"] and _figures(daily.apart[0]) == _figures(apart)


def test_an_agent_whose_record_lands_later_leaves_the_apart_figures_for_the_stored_ones(home, repo):
    lane = Lane(home, repo[1])
    main, kept = _session()
    _store(lane, *main)
    conn = connect(home)
    sync(conn, home)
    before = report(conn, "agent-type", Pricing())
    assert {r.key: _figures(r) for r in before.apart} == {"Plan": (12, 73, 104, 1005), "Explore": (7, 7, 7, 7)}
    assert {r.key for r in before.rows} == {"main"}
    _store(lane, *kept)
    sync(conn, home, lanes=[lane])
    after = report(conn, "agent-type", Pricing())
    assert {r.key: _figures(r) for r in after.apart} == {"Plan": (12, 73, 104, 1005)}
    assert {r.key: _figures(r) for r in after.rows} == {"main": (2, 2, 2, 2), "Explore": (7, 7, 7, 7)}


def test_abcd_usage_prints_copy_only_usage_apart_in_a_real_process(home, repo, abcd_env):
    checkout, sha = repo
    lane = Lane(home, sha)
    main, kept = _session()
    _store(lane, *main)
    _store(lane, *kept)
    env_cmd = [sys.executable, "-m", "abcd_client", "usage", "session"]
    out = subprocess.run(env_cmd + ["--json"], cwd=checkout, capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [(r["key"], r["total"]) for r in doc["rows"]] == [(SESSION, 36)]
    assert [(r["key"], r["total"]) for r in doc["copy_only_agent_progress"]] == [(SESSION, 1194)]
    shown = subprocess.run(env_cmd, cwd=checkout, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    head, _, tail = shown.stdout.partition("agent_progress copies of sub-agents whose transcript is not stored")
    assert "36" in head and "1,194" not in head and "1,194" in tail
