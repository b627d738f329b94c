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
    assert "- sub-agents with no recoverable spawn point: 2 of 3" in doc


def test_reconstruct_renders_a_session_with_no_main_thread():
    parent = (CC(agent_id="p1").user("work")
              .assistant("s1", tool_use("tu_n", "Task"), usage=usage()).result("tu_n", "ok"))
    child = CC(agent_id="c1", start=5).user("nested").say("s2", "nested result", usage=usage())
    r = run([record(parent.body(), "p1", spawn_depth=1),
             record(child.body(), "c1", parent_agent_id="p1", spawn_depth=2,
                    spawn_tool_use_id="tu_n")])
    doc = text(r)
    assert "- main thread: ABSENT" in doc
    assert "No main-thread record for this session is stored." in section(doc, "## Main thread")
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
