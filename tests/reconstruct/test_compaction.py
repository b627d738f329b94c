"""Compaction agents (``acompact…``): recognised by id, linked by time to the
``[COMPACTED]`` marker they wrote the summary for, both ways, and never unattributed."""

from __future__ import annotations

from .support import CC, outside_fences, record, run, section, text, usage

COMPACT = "acompact-7f3e2a"
LATE = "acompact-99"


def _compacted_session():
    """Main: turns 1-2, a compaction boundary at 50 s, the summary (turn 3), more work,
    a second boundary at 120 s. Compaction agents ran 40-42 s and 110-111 s; a third
    ran at 300 s, after every boundary."""
    main = CC().user("long work").say("m1", "ok", usage=usage())
    main.clock = 50
    main.other("system", subtype="compact_boundary", compactMetadata={"trigger": "auto"})
    main.user("This session is being continued…", isCompactSummary=True)
    main.say("m2", "continuing", usage=usage())
    main.clock = 120
    main.other("system", subtype="compact_boundary", compactMetadata={"trigger": "auto"})
    main.user("Continued again…", isCompactSummary=True)
    first = CC(agent_id=COMPACT, start=40).user("summarise").say("c1", "summary", usage=usage())
    second = CC(agent_id="acompact-b2", start=110).user("summarise").say("c2", "s2",
                                                                         usage=usage())
    late = CC(agent_id=LATE, start=300).user("summarise").say("c3", "s3", usage=usage())
    return [record(main.body())] + [
        record(a.body(), a.agent_id, spawn_attribution="unattributed")
        for a in (first, second, late)]


def test_a_compaction_agent_is_linked_to_its_compacted_marker_both_ways():
    r = run(_compacted_session())
    doc = text(r)
    body = section(doc, "## Main thread")
    marker = (f"> **[COMPACTED]** the model's context was compacted here; what came before "
              f"reached the model from here on only as a summary, written by the compaction "
              f"agent `{COMPACT}` — its transcript is in section \"Agent `{COMPACT}`\".")
    assert marker in body
    assert body.index(marker) < body.index("### Turn 3 — user (compaction summary)")
    assert "compaction agent `acompact-b2`" in body
    own = section(doc, f"## Agent `{COMPACT}`")
    assert ("- compaction of: the main thread — it wrote the summary announced by the "
            "[COMPACTED] marker before main turn 3; the harness runs it itself, so no tool "
            "call spawns it") in own
    assert "- spawned by: the harness (a compaction)" in own
    by_id = {a.agent_id: a for a in r.telemetry.agents}
    assert (by_id[COMPACT].compaction_of, by_id[COMPACT].compacted_at_turn) == ("main", 3)
    assert by_id["acompact-b2"].compacted_at_turn == 5
    c = r.telemetry.completeness
    assert (c.compaction_agents, c.compaction_agents_linked) == (3, 2)
    assert c.agents_without_spawn_point == 1  # only the one no boundary follows
    assert "| `acompact-7f3e2a` | — | — | the harness (a compaction) | compaction before " \
           "main turn 3 |" in section(doc, "## Agent timeline")


def test_compaction_agents_are_kept_out_of_unattributed_even_when_unlinked():
    doc = text(run(_compacted_session()))
    said = outside_fences(doc)
    assert "## Unattributed sub-agents" not in said
    late = section(doc, f"## Agent `{LATE}`")
    assert ("- compaction of: the main thread, by its id (acompact…); NOT linked to a "
            "[COMPACTED] marker (no compaction boundary of that thread is stamped at or "
            "after its first line)") in late
    headings = [line for line in said if line.startswith("## Agent `")]
    assert headings == [f"## Agent `{COMPACT}`", "## Agent `acompact-b2`", f"## Agent `{LATE}`"]


def test_a_compaction_agent_without_a_time_is_never_linked_by_guess():
    main = (CC().user("work").other("system", subtype="compact_boundary")
            .user("continued", isCompactSummary=True))
    agent = CC(agent_id=COMPACT, timestamps=False).user("summarise").say("c1", "s",
                                                                         usage=usage())
    r = run([record(main.body()), record(agent.body(), COMPACT)])
    assert r.telemetry.completeness.compaction_agents_linked == 0
    assert "written by the compaction agent" not in text(r)
