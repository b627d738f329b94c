"""ac-2: a machine-readable telemetry file that counts tokens honestly and says what
it could not see."""

from __future__ import annotations

import json

import msgspec

from .support import (CC, notification, record, run, text, text_block, tool_use, usage)


def _four_responses() -> CC:
    """6 usage lines for 4 responses: one response written as three lines."""
    return (CC().user("count me")
            .assistant("r1", {"type": "thinking", "thinking": "hm", "signature": "SIG"},
                       text_block("calling"), tool_use("t1", "Bash", command="ls"),
                       usage=usage(100, 50, 1000, 2000), stop="tool_use")
            .result("t1", "a\nb")
            .say("r2", "two", usage=usage(1, 2, 3, 4))
            .user("again")
            .say("r3", "three", usage=usage(5, 6, 7, 8))
            .say("r4", "four", usage=usage(9, 10, 11, 12)))


def test_telemetry_counts_one_usage_per_response():
    r = run([record(_four_responses().body())])
    tokens = r.telemetry.tokens
    assert (tokens.usage_lines_seen, tokens.api_responses) == (6, 4)
    assert (tokens.input, tokens.output, tokens.cache_creation_input,
            tokens.cache_read_input) == (115, 68, 1021, 2024)
    assert tokens.total == 115 + 68 + 1021 + 2024
    # A naive per-line sum would have counted r1 three times.
    assert tokens.total < 3 * 3150
    # Turns de-duplicate the same way: the three-line response is one turn.
    assert (r.telemetry.turns.user, r.telemetry.turns.assistant) == (3, 4)
    assert r.telemetry.tool_calls == {"Bash": 1}
    assert f"- tokens: {tokens.total} over 4 API response(s)" in text(r)


def test_telemetry_takes_the_largest_output_of_a_response_written_before_2_1_97():
    # Before 2.1.97 early lines carry a streaming placeholder for output_tokens.
    body = (CC().user("q").assistant("p1", text_block("a"), text_block("b"),
                                     tool_use("t9", "Read", file_path="x"),
                                     usage=usage(7, 0, 0, 0), outputs=[1, 1, 312],
                                     stop="tool_use").body())
    r = run([record(body)])
    assert r.telemetry.tokens.output == 312
    assert r.telemetry.tokens.total == 319
    assert r.telemetry.completeness.responses_without_stop_reason == 0


def test_telemetry_flags_a_response_that_never_finished():
    body = (CC().user("q").say("ok1", "done", usage=usage())
            .assistant("cut", text_block("partial"), text_block("more"), usage=usage(1, 3, 0, 0),
                       stop=None).body())
    r = run([record(body)])
    c = r.telemetry.completeness
    assert c.responses_without_stop_reason == 1
    assert any("1 of 2 API response(s) have no stop reason" in n for n in c.notes)
    assert "- responses with no stop reason on their last line: 1" in text(r)


def test_telemetry_reports_usage_it_could_not_deduplicate():
    body = (CC().user("q").say("id1", "with id", usage=usage(1, 1, 1, 1))
            .assistant(None, text_block("no id, line one"), text_block("no id, line two"),
                       usage=usage(10, 10, 10, 10)).body())
    r = run([record(body)])
    t = r.telemetry
    assert t.completeness.usage_without_message_id == 2
    # Counted anyway, once per line: the only way the totals can be inflated.
    assert t.tokens.total == 4 + 40 + 40
    assert (t.tokens.api_responses, t.tokens.usage_lines_seen) == (1, 3)
    assert any("upper bound" in note for note in t.completeness.notes)
    assert "- responses whose usage could not be de-duplicated: 2" in text(r)


def test_telemetry_never_counts_agent_progress_or_sidechain_copies_twice():
    sub = (CC(agent_id="sub1").user("task")
           .assistant("s1", text_block("sub says"), tool_use("st1", "Grep", pattern="x"),
                      usage=usage(100, 100, 100, 100), stop="tool_use")
           .result("st1", "hit").say("s2", "sub done", usage=usage(1, 1, 1, 1)))
    copy = {"type": "assistant", "message": {"id": "s1", "type": "message", "role": "assistant",
            "model": "claude-opus-4-7", "content": [text_block("sub says")],
            "usage": usage(100, 100, 100, 100), "stop_reason": "tool_use"}}
    main = (CC().user("go").assistant("m1", tool_use("tm", "Task"), usage=usage(5, 5, 5, 5))
            .other("progress", parentToolUseID="tm",
                   data={"type": "agent_progress", "agentId": "sub1", "message": copy})
            .assistant("s1", text_block("sub says"), usage=usage(100, 100, 100, 100),
                       stop="tool_use")  # an old-style sidechain copy in the main file
            .result("tm", "sub done", agent_id="sub1"))
    r = run([record(main.body()), record(sub.body(), "sub1", spawn_tool_use_id="tm",
                                         spawn_depth=1)])
    t = r.telemetry
    by_agent = {a.agent_id: a for a in t.agents}
    assert by_agent["sub1"].tokens.total == 404
    assert by_agent[""].tokens.total == 20
    assert t.tokens.total == 424
    assert t.tokens.api_responses == 3
    assert by_agent[""].turns.assistant == 1  # the copied response is the sub-agent's turn
    assert by_agent[""].copied_lines == 2  # one agent_progress line, one copied response
    assert t.completeness.copied_lines == 2


def _measured_session():
    """Main: 6 user and 7 assistant turns over 310 s, two models, a typed sub-agent."""
    main = CC().user("one")
    main.assistant("a1", text_block("x"), tool_use("tu_sub", "Task", prompt="p"),
                   usage=usage(1, 2, 3, 4), stop="tool_use")
    main.result("tu_sub", "sub done")
    for i in range(2, 7):
        main.say(f"a{i}", f"reply {i}", usage=usage(1, 2, 3, 4),
                 model="claude-haiku-4-5" if i == 3 else "claude-opus-4-7")
        main.user(f"prompt {i}") if i < 6 else None
    main.clock = 310
    main.say("a7", "last", usage=usage(1, 2, 3, 4))
    sub = (CC(agent_id="sub1", start=2).user("p")
           .assistant("b1", tool_use("tu_b", "Read", file_path="f"), usage=usage(), stop="tool_use")
           .result("tu_b", "content").say("b2", "sub done", usage=usage()))
    return [record(main.body()), record(sub.body(), "sub1", agent_type="Explore",
                                        spawn_tool_use_id="tu_sub", spawn_depth=1)]


def test_telemetry_reports_every_required_measure():
    r = run(_measured_session())
    t = r.telemetry
    assert t.wall_clock_seconds == 310.0
    assert (t.started_at, t.ended_at) == ("2026-01-01T00:00:00Z", "2026-01-01T00:05:10Z")
    main = t.agents[0]
    assert (main.turns.user, main.turns.assistant, main.turns.total) == (6, 7, 13)
    assert t.models == ["claude-haiku-4-5", "claude-opus-4-7"]
    assert t.agent_types == ["Explore"]
    assert t.tool_calls == {"Read": 1, "Task": 1}
    data = json.loads(r.telemetry_json())
    for field in ("schema_version", "session_id", "root_commit", "mode", "generated_at",
                  "started_at", "ended_at", "wall_clock_seconds", "turns", "tokens",
                  "tool_calls", "models", "agent_types", "agents", "completeness"):
        assert data[field] not in (None, "", [], {}), field
    for field in ("input", "output", "cache_creation_input", "cache_read_input", "total",
                  "api_responses", "usage_lines_seen"):
        assert data["tokens"][field] > 0, field
    for agent in data["agents"]:  # each thread carries its own copy of every measure
        for field in ("record", "started_at", "ended_at", "wall_clock_seconds", "turns",
                      "tokens", "tool_calls", "models", "lines", "spawn_depth"):
            assert agent[field] not in (None, "", [], {}), (agent.get("agent_id"), field)
    sub = data["agents"][1]
    assert (sub["agent_id"], sub["agent_type"], sub["spawned_in"], sub["spawned_at_turn"],
            sub["joined_at_turn"], sub["placed_by"]) == ("sub1", "Explore", "main", 2, 3, "record")
    assert data["completeness"]["records_found"] == data["completeness"]["records_used"] == 2
    assert r.telemetry_json().endswith(b"}\n") and b'\n  "session_id"' in r.telemetry_json()
    assert "- span: 2026-01-01T00:00:00Z → 2026-01-01T00:05:10Z (5m10s)" in text(r)


def test_telemetry_reports_its_own_incompleteness():
    body = (CC(timestamps=False).user("no clock here")
            .say("r1", "and no usage either")
            .raw('{"type": "assistant", "message": {"id": "r2", "content": [{"type": "te'))
    r = run([record(body.body())])
    c = r.telemetry.completeness
    assert c.absent_fields == ["tokens", "tool_calls", "timestamps"]
    assert c.lines_unparseable == 1
    data = json.loads(r.telemetry_json())
    assert "started_at" not in data and data["wall_clock_seconds"] == 0.0
    doc = text(r)
    assert "- measures no source line carried: tokens, tool_calls, timestamps" in doc
    assert "- unparseable transcript lines: 1 (a truncated capture shows as one" in doc
    assert "- span: —" in doc


def test_telemetry_is_computed_before_elision():
    records = _measured_session()
    full = run(records)
    small = run(records, mode="spine", max_block_bytes=3)
    for measure in ("tokens", "turns", "tool_calls", "models", "wall_clock_seconds"):
        assert getattr(full.telemetry, measure) == getattr(small.telemetry, measure), measure
    assert full.telemetry.completeness.elided_blocks == 0
    assert small.telemetry.completeness.elided_blocks > 0
    assert small.telemetry.completeness.omitted_turns == 2
    assert "> … 2 turn(s) omitted in spine mode …" in text(small)


def test_telemetry_json_round_trips_into_the_public_type():
    from abcd_daemon.reconstruct import Telemetry

    r = run(_measured_session(), now_ns=1_800_000_000_123_456_789)
    back = msgspec.json.decode(r.telemetry_json(), type=Telemetry)
    assert back == r.telemetry
    assert back.generated_at == "2027-01-15T08:00:00.123456789Z"


def test_a_notification_in_an_attachment_joins_at_the_next_turn():
    main = (CC().user("go")
            .assistant("m1", tool_use("tb", "Task", run_in_background=True), usage=usage())
            .result("tb", "launched", async_agent="bgx")
            .other("attachment", attachment={"type": "queued_command", "prompt": notification("bgx")})
            .say("m2", "it finished", usage=usage()))
    r = run([record(main.body()), record(CC(agent_id="bgx").user("x").body(), "bgx",
                                         spawn_tool_use_id="tb", spawn_depth=1)])
    agent = r.telemetry.agents[1]
    assert (agent.spawned_at_turn, agent.joined_at_turn) == (2, 4)


def test_usage_fields_that_are_not_counts_read_as_zero():
    odd = {"input_tokens": "12", "output_tokens": -5, "cache_creation_input_tokens": 10**30,
           "cache_read_input_tokens": 2.0}
    body = CC().user("q").say("r1", "a", usage=odd).say("r2", "b", usage=usage(1, 1, 1, 1)).body()
    t = run([record(body)]).telemetry
    assert (t.tokens.input, t.tokens.output, t.tokens.cache_creation_input,
            t.tokens.cache_read_input) == (1, 1, 1, 3)
    assert t.tokens.api_responses == 2
