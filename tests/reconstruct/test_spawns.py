"""Sub-agents a stored thread spawned whose own transcript is not stored: named, placed
at their spawn, and their agent_progress-only usage stated apart from the totals."""

from __future__ import annotations

from .support import (CC, agent_progress, lost_agent_session, outside_fences, record, run, section,
                      text, tool_use, usage)


def test_a_spawn_with_no_stored_transcript_is_listed_with_its_agent_progress_usage_apart():
    r = run(lost_agent_session(spawn_attribution="unattributed"))
    t, c = r.telemetry, r.telemetry.completeness
    [lost] = c.missing_agents
    assert (lost.agent_id, lost.agent_type, lost.spawned_in, lost.spawned_at_turn,
            lost.spawn_tool_use_id) == ("lost1", "Plan", "main", 2, "tu_lost")
    k = lost.progress_tokens
    assert (k.input, k.output, k.cache_creation_input, k.cache_read_input) == (12, 73, 104, 1005)
    assert (k.total, k.api_responses, k.usage_lines_seen) == (1194, 2, 3)
    assert c.agents_spawned_not_stored == 1
    # Counted apart: the totals are the two stored threads' own responses only.
    assert t.tokens.total == 4 + 4 + 28 and t.tokens.api_responses == 3
    doc = text(r)
    said = "\n".join(outside_fences(doc))
    assert ("  - agent `lost1` (Plan), spawned at main turn 2 by tool call `tu_lost`: spawned, "
            "transcript not stored; usage known only from 3 agent_progress copy line(s) over "
            "2 response(s): input 12, output 73, cache creation 104, cache read 1005 (1194 "
            "tokens, NOT in the totals)") in said
    assert "- sub-agents spawned whose transcript is not stored: 1" in said
    assert "| `lost1` | Plan | — | main thread | main turn 2 | spawned, transcript not stored |" \
        in section(doc, "## Agent timeline")
    body = section(doc, "## Main thread")
    assert ("> **[SPAWNED — transcript not stored]** agent `lost1` (Plan) was spawned here"
            in body)
    assert "## Agent `lost1`" not in said
    # The note no longer claims every copy is counted in a thread that owns it.
    notes = c.notes
    assert any(n.startswith("1 line(s) or response(s) copy the responses of a stored thread")
               for n in notes)
    assert any("3 agent_progress line(s) copy 2 response(s) of agent lost1, whose own "
               "transcript is not stored: input 12, output 73, cache creation 104, cache "
               "read 1005 (1194 tokens) — counted nowhere in the totals" in n for n in notes)
    assert "- agents: 2 (1 sub-agent transcript(s) besides the main thread; 1 more spawned, " \
           "transcript not stored)" in said


def test_a_session_whose_only_spawns_are_not_stored_says_so_instead_of_spawning_none():
    # A background agent (async_launched, named only by its structured result) and a
    # synchronous Task whose result names no agent at all.
    main = (CC().user("go")
            .assistant("m1", tool_use("tu_bg", "Agent", subagent_type="Explore",
                                      run_in_background=True), usage=usage(), stop="tool_use")
            .result("tu_bg", "Async agent launched successfully.", async_agent="bgx1")
            .assistant("m2", tool_use("tu_sync", "Task", prompt="p"), usage=usage(),
                       stop="tool_use")
            .result("tu_sync", "it failed to start"))
    r = run([record(main.body())])
    c = r.telemetry.completeness
    assert [(m.agent_id, m.agent_type, m.spawned_at_turn, m.spawn_tool_use_id)
            for m in c.missing_agents] == [("bgx1", "Explore", 2, "tu_bg"), ("", "", 4, "tu_sync")]
    assert all(m.progress_tokens.usage_lines_seen == 0 for m in c.missing_agents)
    doc = text(r)
    assert "spawned no sub-agents" not in doc
    assert "0 of 0" not in doc
    timeline = section(doc, "## Agent timeline")
    assert "| — (no id) | — | — | main thread | main turn 4 | spawned, transcript not stored |" \
        in timeline
    assert ("  - an agent whose id no line names (type not recorded), spawned at main turn 4 "
            "by tool call `tu_sync`: spawned, transcript not stored; no usage of it is stored"
            in doc)


def test_a_stored_agent_is_never_reported_missing_however_it_was_named():
    main = (CC().user("go")
            .assistant("m1", tool_use("tu_1", "Task", subagent_type="Explore"), usage=usage(),
                       stop="tool_use")
            .result("tu_1", "done\nagentId: deadbeef"))
    sub = CC(agent_id="deadbeef").user("x").say("s1", "ok", usage=usage())
    r = run([record(main.body()), record(sub.body(), "deadbeef",
                                         spawn_attribution="unattributed")])
    assert r.telemetry.completeness.missing_agents == []
    assert r.telemetry.completeness.agents_spawned_not_stored == 0
    assert "transcript not stored" not in "\n".join(outside_fences(text(r))).split(
        "## Agent timeline")[1].split("\nIn this table")[0]


def test_agent_progress_naming_no_spawn_call_still_reports_its_agent_and_usage():
    main = CC().user("go").say("m1", "working", usage=usage())
    agent_progress(main, "ghost1", "", "g1", usage(1, 2, 3, 4))
    agent_progress(main, "ghost1", "", "g2", {"input_tokens": 5})
    r = run([record(main.body())])
    [ghost] = r.telemetry.completeness.missing_agents
    assert (ghost.agent_id, ghost.spawned_at_turn, ghost.spawned_in) == ("ghost1", 0, "")
    k = ghost.progress_tokens
    assert (k.input, k.output, k.cache_creation_input, k.cache_read_input) == (6, 2, 3, 4)
    assert not any("copy the responses of a stored thread" in n
                   for n in r.telemetry.completeness.notes)
    assert r.telemetry.tokens.total == 100  # the main thread's own response (10+20+30+40)
    assert "| `ghost1` | — | — | unknown | — | spawned, transcript not stored |" in text(r)
