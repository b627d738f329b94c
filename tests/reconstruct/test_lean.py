"""Reading bodies lean and writing the artefact as it is rendered (issue 16) give exactly
what loading them whole gives: the same artefact bytes and the same telemetry, for every
real session, in both modes, with the per-block cap on and off."""

from __future__ import annotations

import io

import pytest

from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.reconstruct.harness import parse_body
from abcd_daemon.reconstruct.lean import Lean
from abcd_daemon.reconstruct.refill import with_text
from abcd_daemon.store.lane import Lane
from .real import NS, main_threads, store_session
from .support import CC, usage


@pytest.mark.parametrize("mode,cap", [("full", 8192), ("spine", 8192), ("full", 0)])
def test_every_real_session_reconstructs_lean_and_streamed_to_the_same_bytes(
        home, repo, fixtures_dir, tmp_path, mode, cap):
    lane = Lane(home, repo[1])
    spill = tmp_path / "spill"
    spill.mkdir()
    mains = main_threads(fixtures_dir / "real_projects")
    assert len(mains) >= 29
    for main in mains:
        session = store_session(lane, main)
        opts = ReconstructOptions(session_id=session, mode=mode, max_block_bytes=cap)
        whole = reconstruct(lane, opts, now_ns=NS)
        lean = reconstruct(lane, opts, now_ns=NS, stream_above=0)
        sink = io.BytesIO()
        streamed = reconstruct(lane, opts, now_ns=NS, stream_above=0, sink=sink,
                               spill_dir=spill)
        assert lean.artefact == whole.artefact, main
        assert lean.telemetry_json() == whole.telemetry_json(), main
        assert sink.getvalue() == whole.artefact and streamed.artefact == b"", main
        assert streamed.artefact_bytes == whole.artefact_bytes, main
        assert streamed.telemetry_json() == whole.telemetry_json(), main
    assert not list(spill.iterdir())  # the spilled body is gone with its file


def test_a_lean_parse_holds_no_text_until_a_turn_is_written_and_drops_it_after():
    cc = CC()
    for i in range(5):
        cc.user(f"question {i} " + "q" * 1000).say(f"m{i}", f"answer {i} " + "a" * 1000,
                                                  usage=usage())
    body = cc.body()
    full = parse_body(body)
    lean = parse_body(body, Lean(()))
    assert [t.key for t in lean.turns] == [t.key for t in full.turns]
    assert all(b.text == "" and b.line >= 0 for t in lean.turns for b in t.blocks)
    seen = []
    for turn, expected in zip(with_text(lean, lean.turns), full.turns):
        seen.append([b.text for b in turn.blocks])
        assert seen[-1] == [b.text for b in expected.blocks]
    assert all(b.text == "" for t in lean.turns for b in t.blocks)
    assert len(seen) == len(full.turns) == 10


def test_a_response_whose_lines_are_apart_is_written_whole_from_a_lean_parse():
    # One response written as two lines with a tool result between them.
    cc = CC()
    cc.user("go")
    cc.say("m1", "first part", usage=usage())
    cc.result("toolu_1", "result text")
    cc.say("m1", "second part", usage=usage())
    body = cc.body()
    full, lean = parse_body(body), parse_body(body, Lean(()))
    written = [[b.text for b in t.blocks] for t in with_text(lean, lean.turns)]
    assert written == [[b.text for b in t.blocks] for t in full.turns]
    assert ["first part", "second part"] in written


def test_placement_reads_a_lean_tool_result_as_it_reads_the_text():
    text = "done. agentId: a1234567 (that was agent a1234567x and a1234567)"
    cc = CC().user("go").say("m1", "spawning", usage=usage())
    cc.result("toolu_9", text)
    lean = parse_body(cc.body(), Lean(["a1234567", "a1234567x", "zzz"]))
    [block] = [b for t in lean.turns for b in t.blocks if b.kind == "tool_result"]
    assert block.named == "a1234567"
    assert set(block.mentions) == {"a1234567", "a1234567x"}
