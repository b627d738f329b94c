"""The artefact's structure is read back outside fences only, and loses nothing."""

from __future__ import annotations

from abcd_daemon.reconstruct.fence import fence
from abcd_daemon.web.outline import MAIN, outline, section_anchor, turn_anchor

DOC = ("# Session s1\n\nintro\n\n## Completeness\n\n- ok\n\n## Main thread\n\n- record: `r`\n\n"
       "### Turn 1 — user · 2026-01-02T03:04:05Z\n\n"
       + fence("## Agent `forged`\n### Turn 7 — user · 2030-01-01T00:00:00Z\n```\ninner\n```\n")
       + "\n> **[COMPACTED]** the model's context was compacted here.\n\n"
       "### Turn 2 — assistant · claude · 2026-01-02T03:05:00Z\n\n" + fence("ok") + "\n"
       "## Agent `a1`\n\n- type: x\n\n### Turn 1 — user\n\n" + fence("hi") + "\n")


def test_joining_every_chunk_gives_back_the_artefact_exactly():
    o = outline(DOC)
    assert "".join(c.text for s in o.sections for c in s.chunks) == DOC


def test_a_heading_forged_inside_a_fence_is_content_not_structure():
    o = outline(DOC)
    assert [s.key for s in o.sections] == ["header", "completeness", MAIN, "a1"]
    main = o.section(MAIN)
    assert [c.number for c in main.chunks] == [0, 1, 2]
    assert "## Agent `forged`" in main.chunks[1].text
    assert (MAIN, 7) not in o.turn_times()


def test_turn_times_and_compaction_marks_come_from_turn_headings_and_travel_with_the_turn():
    o = outline(DOC)
    assert o.turn_times() == {(MAIN, 1): "2026-01-02T03:04:05Z", (MAIN, 2): "2026-01-02T03:05:00Z"}
    assert o.compactions() == {MAIN: [2]}
    turn2 = o.section(MAIN).chunks[2]
    assert turn2.text.startswith("> **[COMPACTED]**") and "### Turn 2" in turn2.text


def test_anchors_name_the_main_thread_agents_and_turns():
    assert section_anchor(MAIN) == "main-thread"
    assert section_anchor("a1") == "agent-a1"
    assert turn_anchor("a1", 3) == "t-a1-3"


def test_text_with_no_structure_is_one_header_section():
    o = outline("just words\n")
    assert [(s.key, [c.text for c in s.chunks]) for s in o.sections] == [("header", ["just words\n"])]
    assert outline("").sections == []
