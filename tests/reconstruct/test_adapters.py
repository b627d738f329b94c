"""Both harnesses read into one turn model; nothing a body holds can crash it."""

from __future__ import annotations

import json

import pytest

from abcd_daemon.reconstruct.harness import harness_of
from .support import CC, SESSION, outside_fences, record, run, section, text, tool_use, usage


def _store_line(**fields) -> str:
    base = {"uuid": fields.pop("uuid"), "session_id": SESSION, "timestamp": fields.pop("ts"),
            "type": fields.pop("type", "message")}
    base.update(fields)
    return json.dumps(base)


def _store_body(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def test_the_jsonl_store_harness_reads_into_the_same_turn_model():
    main = _store_body([
        _store_line(uuid="u1", ts="2026-02-01T10:00:00Z",
                    message={"role": "user", "content": [{"type": "text", "text": "Review it."}]}),
        _store_line(uuid="a1", parent_uuid="u1", ts="2026-02-01T10:00:05Z",
                    message={"role": "assistant", "content": [
                        {"type": "text", "text": "Delegating."},
                        {"type": "tool_use", "id": "call_1", "name": "task",
                         "input": {"prompt": "look"}}]},
                    usage={"input_tokens": 100, "output_tokens": 20,
                           "cache_read_input_tokens": 5}),
        _store_line(uuid="u2", ts="2026-02-01T10:01:00Z",
                    message={"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "call_1", "content": "fine"}]}),
        _store_line(uuid="b1", ts="2026-02-01T10:02:00Z", type="boundary",
                    boundary={"trigger": "auto", "pre_tokens": 9000}),
        _store_line(uuid="m9", ts="2026-02-01T10:02:01Z", message={"role": "user", "content": [
            {"type": "compact_boundary", "input": {"pre_tokens": 9000}}]}),
        _store_line(uuid="a2", ts="2026-02-01T10:03:00Z",
                    message={"Role": "assistant", "Content": [{"Type": "text", "Text": "Done."}]},
                    usage={"InputTokens": 7, "OutputTokens": 3}),
    ])
    sub = _store_body([
        _store_line(uuid="s1", agent_id="sub9", is_sidechain=True, ts="2026-02-01T10:00:10Z",
                    message={"role": "user", "content": "look"}),
        _store_line(uuid="s2", agent_id="sub9", is_sidechain=True, ts="2026-02-01T10:00:50Z",
                    message={"role": "assistant", "content": "looked"},
                    usage={"input_tokens": 1, "output_tokens": 1}),
    ])
    assert harness_of(main) == "jsonl-store"
    r = run([record(main), record(sub, "sub9", spawn_tool_use_id="call_1", spawn_depth=1)])
    t = r.telemetry
    assert [a.harness for a in t.agents] == ["jsonl-store", "jsonl-store"]
    assert (t.tokens.api_responses, t.tokens.usage_lines_seen) == (3, 3)
    assert t.tokens.total == 125 + 10 + 2
    assert (t.turns.user, t.turns.assistant) == (3, 3)
    assert t.completeness.responses_without_stop_reason == 0
    assert t.completeness.lines_unrecognised == 0
    doc = text(r)
    body = section(doc, "## Main thread")
    assert "**tool call** `task` (`call_1`)" in body and "**tool result** for `call_1`" in body
    assert body.count("> **[COMPACTED]**") == 1
    assert body.index("[COMPACTED]") < body.index("### Turn 4 — assistant")
    assert "- spawned at: main turn 2" in section(doc, "## Agent `sub9`")


def test_a_claude_code_compaction_is_marked_before_its_summary():
    main = (CC().user("long work").say("m1", "ok", usage=usage())
            .other("system", subtype="compact_boundary", compactMetadata={"trigger": "auto"})
            .user("This session is being continued from a previous conversation…",
                  isCompactSummary=True)
            .say("m2", "continuing", usage=usage()))
    doc = text(run([record(main.body())]))
    assert "> **[COMPACTED]**" in doc
    assert doc.index("[COMPACTED]**") < doc.index("### Turn 3 — user (compaction summary)")


@pytest.mark.parametrize("body", [
    b"",
    b"\n\n   \n",
    b"\xff\xfe\x00 not json at all\n\x00\x01\x02",
    b"42\n[1, 2]\n\"a string\"\nnull\n",
    b'{"type": "user", "message": "error"}\n{"type": "assistant", "message": {"content": 7}}\n',
    b'{"type": "user", "message": {"content": ["bare string", 3, {"type": 5}]}}\n',
    b'{"type": ["odd"], "message": {"content": [{"type": "tool_use", "input": 1}]}}\n',
    b'{"type": "boundary", "session_id": "s"}\n{"type": "message", "message": {"role": 5}}\n',
    b'{"type": "user", "message": {"content": "' + b"[" * 5000 + b'"}}\n' + b"[" * 100000,
], ids=["empty", "blank", "binary", "scalars", "message-shapes", "content-items",
        "odd-types", "store-shapes", "deep"])
def test_a_body_that_is_not_a_transcript_never_crashes_it(body):
    r = run([record(CC().user("the main thread").body()), record(body, "junk1")])
    doc = text(r)
    assert "## Agent `junk1`" in doc
    assert outside_fences(doc)  # parsed as a whole, fences balanced


def test_bytes_that_are_not_utf8_are_repaired_not_lost():
    line = json.dumps({"type": "user", "uuid": "u", "message": {"role": "user",
                       "content": "caf\u00e9 PLACEHOLDER ok"}}).encode()
    bad = line.replace(b"PLACEHOLDER", b"\xff\xfe")
    surrogate = json.dumps({"type": "user", "uuid": "v", "message": {
        "role": "user", "content": "lone \\ud800 surrogate"}}).replace("\\\\ud800", "\\ud800")
    r = run([record(bad + b"\n" + surrogate.encode() + b"\n" + b'{"truncated": ')])
    c = r.telemetry.completeness
    assert (c.lines_not_utf8, c.lines_unparseable) == (2, 1)
    doc = text(r)
    assert "café \ufffd\ufffd ok" in doc
    assert "lone ? surrogate" in doc
    assert any("not valid UTF-8" in n for n in c.notes)


def test_every_fixture_transcript_reconstructs(fixtures_dir):
    paths = sorted(fixtures_dir.rglob("*.jsonl"))
    assert len(paths) > 100
    for path in paths:
        r = run([record(path.read_bytes())])
        doc = text(r)
        headings = [line for line in outside_fences(doc) if line.startswith("#")]
        assert all(h.startswith(("# Session ", "## ", "### Turn ")) for h in headings), path
        assert r.telemetry.agents[0].lines >= 0


def test_unknown_line_types_are_counted_not_rendered():
    main = (CC().user("hi").other("brand-new-kind", payload="?")
            .assistant("m1", {"type": "server_tool_use", "id": "x", "text": "searched"},
                       tool_use("t1", "Read"), usage=usage()))
    r = run([record(main.body())])
    assert r.telemetry.completeness.lines_unrecognised == 1
    doc = text(r)
    assert "*(server_tool_use)*" in doc and "searched" in doc
    assert "brand-new-kind" not in doc


def test_current_claude_code_housekeeping_lines_are_recognised_while_unknown_shapes_are_counted():
    main = CC().user("hi").say("m1", "hello", usage=usage())
    for kind in ("cost-state", "mode", "ai-title", "agent-color", "frame-link", "atis-latch",
                 "fork-context-ref", "file-history-delta", "permission-mode", "last-prompt"):
        main.other(kind, totalCostUSD=0.5)
    r = run([record(main.body())])
    assert r.telemetry.completeness.lines_unrecognised == 0
    assert "- unrecognised lines or blocks: 0" in text(r)
    assert "totalCostUSD" not in text(r)
    # A shape nobody writes is still counted, beside the housekeeping.
    r = run([record(main.other("cost-statement", x=1).body())])
    assert r.telemetry.completeness.lines_unrecognised == 1
