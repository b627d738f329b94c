"""ac-1: one artefact in which every sub-agent is attributable to its spawn point."""

from __future__ import annotations

import pytest

from abcd_daemon.errors import InputError, NotFoundError
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct, reconstruct_records
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import format_record
from .support import (CC, SESSION, notification, outside_fences, record, run,
                        section, text, text_block, tool_use, usage)


def _async_session():
    """Main: T1 user, T2 Task call (background), T3 launch ack, T4-T6 talk, T7 the
    task notification (the join)."""
    main = (CC().user("Spawn a coverage agent in the background.")
            .assistant("m2", tool_use("tu_1", "Task", prompt="cover it",
                                      run_in_background=True), usage=usage())
            .result("tu_1", "Async agent launched successfully.\nagentId: cov1",
                    async_agent="cov1")
            .say("m4", "While it runs, I keep working.", usage=usage())
            .user("Anything yet?")
            .say("m6", "Not yet.", usage=usage())
            .user(notification("cov1")))
    agent = CC(agent_id="cov1", start=2).user("cover it").say("s1", "Coverage is 96%.",
                                                              usage=usage())
    return main, agent


def test_reconstruct_marks_every_subagent_at_its_spawn_and_join_point():
    main, agent = _async_session()
    sync = CC(agent_id="sync1", start=20).user("look").say("s9", "found it", usage=usage())
    main.assistant("m8", tool_use("tu_2", "Task", prompt="look"), usage=usage()) \
        .result("tu_2", "found it", agent_id="sync1")
    r = run([record(main.body()),
             record(agent.body(), "cov1", agent_type="Explore", spawn_depth=1,
                    spawn_tool_use_id="tu_1"),
             record(sync.body(), "sync1", agent_type="general-purpose", spawn_depth=1,
                    spawn_tool_use_id="tu_2")])
    doc = text(r)
    body = section(doc, "## Main thread")
    # SPAWNED right after the turn that issued the call, JOINED after the notification.
    spawned = body.index("> **[SPAWNED** agent `cov1` (Explore) here")
    assert body.index("### Turn 2 — assistant") < spawned < body.index("### Turn 3 — user")
    joined = body.index("> **[JOINED** agent `cov1` here — its result reached this thread")
    assert body.index("### Turn 7 — user") < joined < body.index("### Turn 8 — assistant")
    provenance = section(doc, "## Agent `cov1`")
    assert ("- spawned at: main turn 2 (tool call `tu_1`, placed by the record's stored "
            "spawn tool call)") in provenance
    assert "- joined at: main turn 7" in provenance
    assert ("- CONCURRENCY: 4 turn(s) of the main thread ran between the spawn and the "
            "join, and none of them had this agent's result") in provenance
    # The synchronous delegate: spawned at 8, joined at 9, nothing ran between.
    sync_section = section(doc, "## Agent `sync1`")
    assert "- spawned at: main turn 8" in sync_section and "- joined at: main turn 9" in sync_section
    assert "CONCURRENCY" not in sync_section
    timeline = section(doc, "## Agent timeline")
    assert "| `cov1` | Explore | 1 | main thread | main turn 2 |" in timeline
    assert "| main turn 7 · 2026-01-01T00:00:06Z | 2 |" in timeline
    cov = next(a for a in r.telemetry.agents if a.agent_id == "cov1")
    assert (cov.spawned_in, cov.spawned_at_turn, cov.joined_at_turn, cov.placed_by) == (
        "main", 2, 7, "record")
    assert cov.joined_at == "2026-01-01T00:00:06Z"
    assert r.telemetry.completeness.agents_without_spawn_point == 0
    assert r.telemetry.completeness.agents_without_join_point == 0


def test_reconstruct_places_an_agent_from_the_spawning_transcript_alone():
    # No spawn tool call stored on the record: only the host's tool result names it.
    main = (CC().user("two delegates")
            .assistant("m2", tool_use("toolu_A", "Agent", prompt="a"), usage=usage())
            .result("toolu_A", [text_block("done"),
                                text_block("agentId: a1b2c3d4e5f6a7b8c (use SendMessage)")])
            .say("m4", "next", usage=usage())
            # The call that spawned this one is not in the transcript, only its result.
            .result("toolu_gone", "agentId: feed0042 finished"))
    r = run([record(main.body()),
             record(CC(agent_id="a1b2c3d4e5f6a7b8c").user("a").body(), "a1b2c3d4e5f6a7b8c",
                    spawn_attribution="unattributed"),
             record(CC(agent_id="feed0042").user("b").body(), "feed0042",
                    spawn_attribution="unattributed")])
    doc = text(r)
    first = section(doc, "## Agent `a1b2c3d4e5f6a7b8c`")
    assert ("- spawned at: main turn 2 (tool call `toolu_A`, placed by the spawning "
            "transcript's own tool result)") in first
    assert "- joined at: main turn 3" in first
    # The call is missing, so the result's own turn is the spawn point: one marker.
    second = section(doc, "## Agent `feed0042`")
    assert "- spawned at: main turn 5 (tool call `toolu_gone`" in second
    assert ("> **[JOINED** agent `feed0042` here — spawned and joined in the same turn "
            "(synchronous), in the line stamped 2026-01-01T00:00:04Z. **]**") in doc
    assert "[SPAWNED** agent `feed0042`" not in doc
    placed_by = {a.agent_id: a.placed_by for a in r.telemetry.agents if a.agent_id}
    assert placed_by == {"a1b2c3d4e5f6a7b8c": "transcript", "feed0042": "transcript"}
    # Lineage never attributed, yet a spawn point was recovered: two different facts.
    c = r.telemetry.completeness
    assert (c.agents_unattributed, c.agents_without_spawn_point) == (2, 0)


def test_an_agent_id_inside_a_longer_word_does_not_place_it():
    main = (CC().user("x").assistant("m2", tool_use("t1", "Bash", command="ls"), usage=usage())
            .result("t1", "worktree-agent-abc123def and abc123defx"))
    r = run([record(main.body()), record(CC(agent_id="abc123def").user("y").body(),
                                         "abc123def", spawn_attribution="unattributed")])
    assert r.telemetry.completeness.agents_without_spawn_point == 1


def test_reconstruct_segregates_unattributed_subagents():
    main = (CC().user("go").assistant("m2", tool_use("tu_1", "Task"), usage=usage())
            .result("tu_1", "ok"))
    placed = CC(agent_id="placed1").user("p")
    loose = CC(agent_id="loose1").user("nobody says where I came from")
    orphan = CC(agent_id="orphan1").user("my parent is gone")
    r = run([record(main.body()),
             record(placed.body(), "placed1", spawn_tool_use_id="tu_1", spawn_depth=1),
             record(loose.body(), "loose1", spawn_tool_use_id="tu_stale", spawn_depth=1),
             record(orphan.body(), "orphan1", parent_agent_id="gone1", spawn_depth=2,
                    spawn_tool_use_id="tu_1")])
    doc = text(r)
    headings = [line for line in outside_fences(doc) if line.startswith("## ")]
    assert headings.index("## Unattributed sub-agents") > headings.index("## Agent `placed1`")
    unattributed = doc[doc.index("## Unattributed sub-agents\n"):]
    assert "The 2 agent(s) below belong to this session" in unattributed
    assert "## Agent `loose1`" in unattributed and "## Agent `orphan1`" in unattributed
    assert "## Agent `placed1`" not in unattributed
    # A named but absent parent is never replaced by the main thread, although the
    # main thread holds the very tool call the record names.
    orphan_section = section(doc, "## Agent `orphan1`")
    assert "- spawned at: NOT RECOVERABLE from what is stored" in orphan_section
    assert "its named parent `gone1` is not in this set" in orphan_section
    assert "agent `orphan1`" not in section(doc, "## Main thread")
    c = r.telemetry.completeness
    assert c.agents_without_spawn_point == 2
    assert c.agents_whose_parent_is_not_in_this_set == 1
    assert c.agents_unattributed == 0  # all three records say "sidecar"
    assert "- sub-agents with no recoverable spawn point: 2 of the 3 stored" in doc


def test_reconstruct_renders_a_session_with_no_main_thread():
    parent = (CC(agent_id="p1").user("work")
              .assistant("s1", tool_use("tu_n", "Task"), usage=usage()).result("tu_n", "ok"))
    child = CC(agent_id="c1", start=5).user("nested").say("s2", "nested result", usage=usage())
    r = run([record(parent.body(), "p1", spawn_depth=1),
             record(child.body(), "c1", parent_agent_id="p1", spawn_depth=2,
                    spawn_tool_use_id="tu_n")])
    doc = text(r)
    assert "- main thread: ABSENT" in doc
    assert "No main-thread record for this session is stored, and abcd never saw its main file " \
        "empty" in section(doc, "## Main thread")
    assert "nested result" in doc
    assert "## Unattributed sub-agents" in doc  # p1: no main thread to place it on
    assert "- spawned at: `p1` turn 2" in section(doc, "## Agent `c1`")
    c = r.telemetry.completeness
    assert c.main_thread_present is False
    assert any(note.startswith("no main-thread record for this session is stored")
               for note in c.notes)


def test_reconstruct_places_nested_and_long_running_agents():
    # An async agent spawned at main turn 18 and joined at 167, which spawned a nested
    # agent (depth 2) at its own turn 2.
    main = CC().user("start")
    for i in range(2, 18):
        main = main.say(f"m{i}", f"step {i}", usage=usage()) if i % 2 == 0 else main.user(f"u{i}")
    main.assistant("m18", tool_use("tu_bg", "Task", run_in_background=True), usage=usage())
    main.result("tu_bg", "Async agent launched successfully.\nagentId: bg7", async_agent="bg7")
    for i in range(20, 167):
        main = main.say(f"m{i}", f"work {i}", usage=usage()) if i % 2 == 0 else main.user(f"u{i}")
    main.other("attachment", attachment={"type": "queued_command",
                                          "prompt": notification("bg7")})
    main.say("m167", "The background agent reported.", usage=usage())
    bg = (CC(agent_id="bg7", start=30).user("long job")
          .assistant("b2", tool_use("tu_nested", "Task"), usage=usage())
          .result("tu_nested", "nested done").say("b4", "all done", usage=usage()))
    nested = CC(agent_id="nest2", start=40).user("inner").say("n2", "inner done", usage=usage())
    r = run([record(main.body()),
             record(bg.body(), "bg7", spawn_depth=1, spawn_tool_use_id="tu_bg"),
             record(nested.body(), "nest2", parent_agent_id="bg7", spawn_depth=2,
                    spawn_tool_use_id="tu_nested")])
    doc = text(r)
    bg_section = section(doc, "## Agent `bg7`")
    assert "- spawned at: main turn 18" in bg_section
    assert "- joined at: main turn 167" in bg_section
    assert "- CONCURRENCY: 148 turn(s) of the main thread" in bg_section
    nested_section = section(doc, "## Agent `nest2`")
    assert "- spawned by: `bg7`" in nested_section
    assert "- spawned at: `bg7` turn 2" in nested_section
    assert "- joined at: `bg7` turn 3" in nested_section
    # The nested agent's markers sit in its parent's section, not in the main thread.
    assert "[SPAWNED** agent `nest2`" in bg_section
    assert "nest2" not in section(doc, "## Main thread")
    # Depth order: the depth-1 agent's section comes first.
    assert doc.index("## Agent `bg7`") < doc.index("## Agent `nest2`")
    nest = next(a for a in r.telemetry.agents if a.agent_id == "nest2")
    assert (nest.spawned_in, nest.spawned_at_turn, nest.joined_at_turn) == ("bg7", 2, 3)


def test_reconstruct_chooses_one_record_per_agent_and_says_which():
    short = CC(agent_id="ag1").user("first half")
    long = CC(agent_id="ag1").user("first half").say("s2", "second half", usage=usage())
    main = CC().user("hello")
    kept = record(long.body(), "ag1", captured=1)
    shorter = record(short.body(), "ag1", captured=5)  # newer, but shorter
    broken = (record(CC(agent_id="ag1").user("x").body(), "ag1")[0],
              OSError("record '/home/someone/.abcd/transcripts/x/records/r.md' is unreadable"))
    r = run([record(main.body()), shorter, kept, broken])
    doc = text(r)
    assert "second half" in doc
    dropped = {d.record: d for d in r.telemetry.completeness.dropped_records}
    assert set(dropped) == {shorter[0].name, broken[0].name}
    assert dropped[shorter[0].name].reason == (
        f"a longer or newer record for the same agent was used ({kept[0].name})")
    assert dropped[broken[0].name].reason.startswith("unreadable: ")
    assert "/home/someone" not in doc and "'r.md'" in doc
    assert f"- record NOT used: `{shorter[0].name}` — a longer or newer record" in doc
    assert (r.telemetry.completeness.records_found, r.telemetry.completeness.records_used) == (4, 2)
    assert "- records used: 2 of 4 found" in doc


def test_an_unreadable_used_record_is_rendered_and_reported():
    only = (record(CC().user("x").body())[0], OSError("permission denied"))
    r = run([only])
    doc = text(r)
    assert "This record could not be read: unreadable: permission denied" in doc
    assert r.telemetry.completeness.dropped_records[0].reason == "unreadable: permission denied"


def test_reconstruct_refuses_what_it_cannot_answer(home, repo):
    with pytest.raises(NotFoundError, match=f'no records for session "{SESSION}"'):
        run([])
    with pytest.raises(InputError, match='reconstruct mode "tree" is not one of full, spine'):
        ReconstructOptions(session_id=SESSION, mode="tree")
    with pytest.raises(InputError, match="negative"):
        ReconstructOptions(session_id=SESSION, max_block_bytes=-1)
    with pytest.raises(InputError, match="not a usable id"):
        ReconstructOptions(session_id="../escape")
    with pytest.raises(InputError):
        reconstruct_records("not-a-sha", [record(b"{}")], ReconstructOptions(session_id=SESSION),
                            now_ns=1)
    # Through a real lane: a session the store does not hold.
    lane = Lane(home, repo[1]).ensure("records")
    other = record(CC(session="other-session").user("hi").body(), session="other-session")
    (lane.records / other[0].name).write_bytes(format_record(other[0], other[1]))
    with pytest.raises(NotFoundError):
        reconstruct(lane, ReconstructOptions(session_id=SESSION), now_ns=1)


def test_the_order_records_arrive_in_changes_nothing():
    main, agent = _async_session()
    loaded = [record(main.body()),
              record(agent.body(), "cov1", spawn_tool_use_id="tu_1", spawn_depth=1),
              record(CC(agent_id="cov1").user("older").body(), "cov1", captured=-5),
              record(CC(agent_id="zz9").user("loose").body(), "zz9")]
    forward, backward = run(loaded), run(loaded[::-1])
    assert forward.artefact == backward.artefact
    assert forward.telemetry_json() == backward.telemetry_json()


def _older_layout_session():
    """Claude Code 2.0.x: the result names its agent only in the structured
    ``toolUseResult.agentId``; the text carries the report, never the id."""
    main = (CC().user("explore it")
            .assistant("m1", tool_use("toolu_T", "Task", subagent_type="Explore",
                                      description="look", prompt="look around"),
                       usage=usage(), stop="tool_use")
            .result("toolu_T", [text_block("Here is what I found.")], agent_id="c8d9b115")
            .say("m2", "thanks", usage=usage()))
    agent = CC(agent_id="c8d9b115", start=1).user("look around").say("s1", "found",
                                                                      usage=usage())
    return main, agent


def test_an_older_layout_agent_named_only_by_its_structured_result_is_placed_at_its_task_call():
    main, agent = _older_layout_session()
    assert b"agentId: c8d9b115" not in main.body()  # the text rung alone cannot place it
    r = run([record(main.body()), record(agent.body(), "c8d9b115",
                                         spawn_attribution="unattributed")])
    a = next(a for a in r.telemetry.agents if a.agent_id == "c8d9b115")
    assert (a.spawned_in, a.spawned_at_turn, a.joined_at_turn, a.placed_by,
            a.spawn_tool_use_id) == ("main", 2, 3, "transcript", "")
    doc = text(r)
    assert "## Unattributed sub-agents" not in outside_fences(doc)
    assert ("- spawned at: main turn 2 (tool call `toolu_T`, placed by the spawning "
            "transcript's own tool result)") in section(doc, "## Agent `c8d9b115`")


def test_an_agent_type_no_payload_or_sidecar_names_comes_from_the_spawning_call_and_says_so():
    main, agent = _older_layout_session()
    r = run([record(main.body()), record(agent.body(), "c8d9b115",
                                         spawn_attribution="unattributed")])
    a = next(a for a in r.telemetry.agents if a.agent_id == "c8d9b115")
    assert (a.agent_type, a.agent_type_source) == ("Explore", "spawn call")
    assert r.telemetry.agent_types == ["Explore"]
    assert r.telemetry.completeness.agents_without_agent_type == 0
    doc = text(r)
    assert ("- type: Explore (from the spawning tool call's `subagent_type` input; no hook "
            "payload or sidecar named it)") in section(doc, "## Agent `c8d9b115`")
    assert "> **[JOINED** agent `c8d9b115` here" in doc
    # A type the record carries wins, and needs no provenance of its own.
    r = run([record(main.body()), record(agent.body(), "c8d9b115", agent_type="Plan")])
    a = next(a for a in r.telemetry.agents if a.agent_id == "c8d9b115")
    assert (a.agent_type, a.agent_type_source) == ("Plan", "record")
    assert "- type: Plan\n" in section(text(r), "## Agent `c8d9b115`")


def test_an_agent_named_only_by_agent_progress_lines_is_placed_at_the_call_they_name():
    copy = {"type": "assistant", "message": {"id": "s1", "role": "assistant",
                                             "content": [text_block("w")]}}
    main = (CC().user("go")
            .assistant("m1", tool_use("tu_p", "Agent", subagent_type="Explore"),
                       usage=usage(), stop="tool_use")
            .other("progress", parentToolUseID="tu_p",
                   data={"type": "agent_progress", "agentId": "aprog1", "message": copy})
            .result("tu_p", "report without an id"))
    sub = CC(agent_id="aprog1", start=1).user("x").say("s1", "w", usage=usage())
    r = run([record(main.body()), record(sub.body(), "aprog1", spawn_attribution="unattributed")])
    a = next(a for a in r.telemetry.agents if a.agent_id == "aprog1")
    assert (a.spawned_at_turn, a.joined_at_turn, a.placed_by) == (2, 3, "transcript")
    assert a.agent_type == "Explore"


def test_a_joined_marker_carries_the_time_of_the_line_that_carried_the_agent_result():
    # One turn merges a quick TaskUpdate result (at 3 s) and the agent's result (at 500 s):
    # the turn heading shows the first line's time, the JOINED marker the result's.
    main = (CC().user("go")
            .assistant("m1", tool_use("tu_upd", "TaskUpdate", status="x"),
                       tool_use("tu_ag", "Agent", subagent_type="Explore"),
                       usage=usage(), stop="tool_use"))
    main.result("tu_upd", "updated")
    main.clock = 500
    main.result("tu_ag", "report", agent_id="slow1")
    sub = CC(agent_id="slow1", start=3).user("x").say("s1", "report", usage=usage())
    r = run([record(main.body()), record(sub.body(), "slow1", spawn_attribution="unattributed")])
    doc = text(r)
    body = section(doc, "## Main thread")
    assert "### Turn 3 — user · 2026-01-01T00:00:03Z" in body
    assert ("> **[JOINED** agent `slow1` here — its result reached this thread at this turn, "
            "in the line stamped 2026-01-01T00:08:20Z. **]**") in body
    a = next(a for a in r.telemetry.agents if a.agent_id == "slow1")
    assert (a.joined_at_turn, a.joined_at) == (3, "2026-01-01T00:08:20Z")
    assert ("- joined at: main turn 3 (the line carrying its result is stamped "
            "2026-01-01T00:08:20Z)") in section(doc, "## Agent `slow1`")


def test_agents_spawned_in_one_turn_are_stated_as_parallel_with_their_overlap():
    main = (CC().user("fan out")
            .assistant("m1", tool_use("tu_a", "Agent", subagent_type="Explore"),
                       tool_use("tu_b", "Agent", subagent_type="Explore"),
                       tool_use("tu_c", "Agent", subagent_type="Explore"),
                       usage=usage(), stop="tool_use"))
    main.clock = 100
    for call, agent in (("tu_a", "par1"), ("tu_b", "par2"), ("tu_c", "par3")):
        main.result(call, "done", agent_id=agent)
    # par1 runs 10-40 s, par2 30-60 s: they overlap 30-40 s; par3 runs 70-80 s, alone.
    agents = []
    for agent, start, end in (("par1", 10, 40), ("par2", 30, 60), ("par3", 70, 80)):
        sub = CC(agent_id=agent, start=start).user("x")
        sub.clock = end
        agents.append(record(sub.say(f"r-{agent}", "ok", usage=usage()).body(), agent,
                             spawn_attribution="unattributed"))
    r = run([record(main.body())] + agents)
    by_id = {a.agent_id: a for a in r.telemetry.agents}
    assert by_id["par1"].concurrent_with == ["par2"]
    assert by_id["par2"].concurrent_with == ["par1"]
    assert by_id["par3"].concurrent_with == []
    doc = text(r)
    assert ("- PARALLEL: spawned in the same turn as, and running at the same time as, agent "
            "`par2` (overlap 2026-01-01T00:00:30Z → 2026-01-01T00:00:40Z, 10s)") in section(
                doc, "## Agent `par1`")
    assert "PARALLEL" not in section(doc, "## Agent `par3`")
