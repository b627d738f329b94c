"""Reconstructing a record of many turns, read lean, costs memory by its longest line and
a few dozen bytes a turn — not by the whole turn model — and writes exactly what loading
it whole writes (issue 16). The memory is measured in a real process (its VmHWM)."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.reconstruct.harness import parse_body
from abcd_daemon.reconstruct.lean import Lean
from abcd_daemon.reconstruct.refill import with_text
from abcd_daemon.store.lane import Lane
from .real import NS, store
from .support import CC, SESSION, tool_use, usage

#: Run in a fresh interpreter: reconstruct one session of a lane (streamed, in-process
#: as the CLI does), then print the process's own peak RSS in kB.
_CHILD = """
import io, sys
from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
home, sha, session, above = sys.argv[1:5]
lane = Lane(Home(home), sha)
with open(sys.argv[5], "wb") as out:
    reconstruct(lane, ReconstructOptions(session_id=session, max_block_bytes=8192),
                now_ns=1, sink=out, spill_dir=sys.argv[6], stream_above=int(above))
print([l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1])
"""


def _many_turns(turns: int, long_bytes: int) -> bytes:
    """``turns`` short turns (prompts, answers, tool calls and results) and, halfway, one
    tool result of ``long_bytes`` (a pasted file)."""
    cc = CC()
    for i in range(turns // 4):
        cc.user(f"question {i}")
        cc.assistant(f"msg_{i:07d}", tool_use(f"toolu_{i:07d}", "Bash", command=f"ls {i}"),
                     usage=usage())
        cc.result(f"toolu_{i:07d}", "x" * 40 if i != turns // 8 else "y" * long_bytes)
        cc.say(f"msg_{i:07d}b", f"answer {i}", usage=usage())
    return cc.body()


def _peak_kb(tmp_path, home, sha: str, session: str, above: int) -> tuple[int, bytes]:
    spill = tmp_path / f"spill-{session}"
    spill.mkdir()
    out = tmp_path / f"out-{session}.md"
    env = dict(os.environ, PYTHONHASHSEED="0")
    res = subprocess.run([sys.executable, "-c", _CHILD, str(home.root), sha, session,
                          str(above), str(out), str(spill)], env=env, capture_output=True,
                         timeout=600, check=True)
    return int(res.stdout.split()[-1]), out.read_bytes()


def test_a_many_turn_record_reconstructs_under_a_memory_ceiling_set_by_its_longest_line(
        home, repo, tmp_path):
    lane = Lane(home, repo[1])
    turns, long_bytes = 80_000, 24 << 20
    body = _many_turns(turns, long_bytes)
    store(lane, SESSION, body, captured_ns=NS)
    tiny = "5a9221e2-0000-4000-8000-00000000beef"
    store(lane, tiny, CC(session=tiny).user("hi").say("m", "hello", usage=usage()).body(),
          captured_ns=NS)
    idle_kb, _ = _peak_kb(tmp_path, home, repo[1], tiny, 0)
    peak_kb, streamed = _peak_kb(tmp_path, home, repo[1], SESSION, 0)
    # The line is held about twice while it is decoded (its bytes, its text); a turn
    # costs at most ~350 bytes (the whole model used to cost ~800: 144 MB here).
    ceiling_kb = idle_kb + (2.5 * long_bytes + 350 * turns) / 1024
    assert peak_kb <= ceiling_kb, (peak_kb, idle_kb, ceiling_kb)
    whole = reconstruct(lane, ReconstructOptions(session_id=SESSION, max_block_bytes=8192),
                        now_ns=1, stream_above=1 << 40)
    assert streamed == whole.artefact
    assert b"bytes elided by the per-block cap" in streamed


def _mixed() -> bytes:
    """A response split by a tool result, long ASCII and non-ASCII texts of every capped
    kind, an unknown block kind, an empty thinking block."""
    cc = CC()
    cc.user("go")
    cc.assistant("m1", {"type": "thinking", "thinking": "é" * 5000, "signature": "s"},
                 tool_use("toolu_1", "Read", path="/x"), usage=usage())
    cc.result("toolu_1", "ü" * 3000 + "tail")
    cc.assistant("m1", {"type": "text", "text": "z" * 20000}, usage=usage())
    cc.user([{"type": "tool_result", "tool_use_id": "toolu_1",
              "content": [{"type": "text", "text": "€" * 2731}]}])
    cc.assistant("m2", {"type": "server_tool_use", "text": "q" * 9000},
                 {"type": "thinking", "thinking": ""}, usage=usage())
    return cc.body()


def _streamed_as_whole(lane: Lane, spill_dir, caps) -> None:
    """Reconstructing SESSION lean and streamed writes what loading it whole writes."""
    for cap in caps:
        opts = ReconstructOptions(session_id=SESSION, max_block_bytes=cap)
        whole = reconstruct(lane, opts, now_ns=NS)
        sink = io.BytesIO()
        streamed = reconstruct(lane, opts, now_ns=NS, stream_above=0, sink=sink,
                               spill_dir=spill_dir)
        assert sink.getvalue() == whole.artefact, cap
        assert streamed.telemetry_json() == whole.telemetry_json(), cap


def test_lean_reading_with_a_cut_writes_what_the_whole_body_writes(home, repo, tmp_path):
    lane = Lane(home, repo[1])
    store(lane, SESSION, _mixed(), captured_ns=NS)
    _streamed_as_whole(lane, tmp_path, (0, 1, 2, 8192, 8193))


def test_a_lean_turn_gets_back_every_block_of_every_line_it_was_read_from():
    body = _mixed()
    full, lean = parse_body(body), parse_body(body, Lean(()))
    assert len(lean.turns) == len(full.turns)
    for got, want in zip(with_text(lean, lean.turns), full.turns):
        assert [(b.kind, b.text, b.raw, b.ref, b.name, b.is_error) for b in got.blocks] == [
            (b.kind, b.text, b.raw, b.ref, b.name, b.is_error) for b in want.blocks]
        assert (got.index, got.role, got.key, got.model, got.when) == (
            want.index, want.role, want.key, want.model, want.when)
    def slots(r):
        return [getattr(r, name) for name in r.__slots__]

    assert sorted((k, slots(r)) for k, r in lean.responses.items()) == sorted(
        (k, slots(r)) for k, r in full.responses.items())


def test_lines_rendered_in_pieces_as_they_are_read_write_what_the_whole_body_writes(
        home, repo, tmp_path, monkeypatch):
    """A long line's rendered blocks are encoded and spilled piece by piece (here every
    line's, the piece made tiny): the artefact and its elision counts do not change."""
    from abcd_daemon.reconstruct import render_spill

    monkeypatch.setattr(render_spill, "_PIECE", 7)
    lane = Lane(home, repo[1])
    store(lane, SESSION, _mixed(), captured_ns=NS)
    _streamed_as_whole(lane, tmp_path, (0, 5, 8192))


def test_the_collector_is_paused_while_a_session_is_read_and_left_as_it_was_after(
        home, repo, monkeypatch):
    """The cyclic collector does not walk a large session's tables as they grow: it is
    off while the session is read and written, and as it was before once it is done
    (overlapping users in threads: ``tests/scanner/test_gcpause.py``)."""
    import gc

    from abcd_daemon.reconstruct import api

    lane = Lane(home, repo[1])
    store(lane, SESSION, _many_turns(40, 100), captured_ns=NS)
    seen = []
    real = api.parse_body
    monkeypatch.setattr(api, "parse_body", lambda *a: (seen.append(gc.isenabled()), real(*a))[1])
    opts = ReconstructOptions(session_id=SESSION, max_block_bytes=8192)
    was = gc.isenabled()
    try:
        for state in (True, False):
            (gc.enable if state else gc.disable)()
            reconstruct(lane, opts, now_ns=NS, stream_above=0, sink=io.BytesIO())
            assert gc.isenabled() is state
        assert seen == [False, False]
    finally:
        (gc.enable if was else gc.disable)()
