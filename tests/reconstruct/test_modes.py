"""The two answers to size: spine mode and the per-block cap, each marked and counted."""

from __future__ import annotations

from .support import (CC, fenced_text, outside_fences, record, run, section, text,
                        text_block, tool_use, usage)


def _session():
    main = (CC().user("main one")
            .assistant("m1", tool_use("tu_a", "Task", prompt="long job"), usage=usage())
            .result("tu_a", "long job done")
            .say("m2", "main four", usage=usage())
            .user("main five"))
    long = CC(agent_id="long1", start=1).user("first words")
    for i in range(2, 6):
        long.say(f"l{i}", f"middle {i}", usage=usage()) if i % 2 == 0 else long.user(f"mid {i}")
    long.say("l6", "last words", usage=usage())
    short = CC(agent_id="short1", start=3).user("only").say("x1", "two", usage=usage())
    return [record(main.body()),
            record(long.body(), "long1", spawn_tool_use_id="tu_a", spawn_depth=1),
            record(short.body(), "short1", spawn_depth=1)]


def test_spine_mode_keeps_the_thread_and_summarises_the_delegates():
    records = _session()
    full, spine = run(records), run(records, mode="spine")
    doc = text(spine)
    # The main thread is whole, markers included.
    assert section(doc, "## Main thread") == section(text(full), "## Main thread")
    agent = section(doc, "## Agent `long1`")
    assert "first words" in agent and "last words" in agent
    assert "### Turn 1 — user" in agent and "### Turn 6 — assistant" in agent
    assert "> … 4 turn(s) omitted in spine mode …" in agent
    assert "middle 2" not in agent and "### Turn 3" not in agent
    # A delegate of two turns has nothing to omit.
    assert "omitted" not in section(doc, "## Agent `short1`")
    c = spine.telemetry.completeness
    assert c.omitted_turns == 4
    assert ("spine mode omitted 4 sub-agent turn(s) from the artefact; run again with "
            "--mode full for the whole session") in c.notes
    assert spine.telemetry.turns == full.telemetry.turns
    assert "- mode: spine" in doc and spine.telemetry.mode == "spine"
    assert spine.artefact_bytes < full.artefact_bytes


def test_reconstruct_caps_a_block_and_says_so():
    big_result = "r" * 5000
    big_text = "t" * 5000
    main = (CC().user(big_text)
            .assistant("m1", {"type": "thinking", "thinking": "é" * 100},
                       tool_use("tu_1", "Bash", command="x" * 50), usage=usage())
            .result("tu_1", big_result))
    records = [record(main.body())]
    capped, whole = run(records, max_block_bytes=100), run(records)
    doc = text(capped)
    # The result keeps its first 100 bytes and says how much went.
    assert "```\n" + "r" * 100 + "\n```\n… [4900 bytes elided by the per-block cap]" in doc
    # Thinking is capped on a character boundary (é is two bytes).
    assert "```\n" + "é" * 50 + "\n```\n… [100 bytes elided by the per-block cap]" in doc
    # Plain text is never capped; a small tool input is untouched.
    assert big_text in fenced_text(doc)
    assert '"command": "' + "x" * 50 + '"' in doc
    c = capped.telemetry.completeness
    assert (c.elided_blocks, c.elided_bytes) == (2, 5000)
    assert any("truncated in the artefact at 100 bytes each (5000 bytes elided)" in n
               for n in c.notes)
    # The elision line is the document speaking, outside any fence.
    assert "… [4900 bytes elided by the per-block cap]" in outside_fences(doc)
    assert capped.telemetry.tokens == whole.telemetry.tokens
    assert big_result in text(whole) and whole.telemetry.completeness.elided_blocks == 0


def test_an_image_is_named_not_carried():
    main = CC().user([text_block("look"), {"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}}])
    doc = text(run([record(main.body())]))
    assert "*(an image block was here; images are not carried into the artefact)*" in doc
    assert "iVBORw0KGgo" not in doc


def test_thinking_is_rendered_without_its_signature():
    main = CC().user("q").assistant("m1", {"type": "thinking", "thinking": "let me see",
                                           "signature": "EuYBCkQSIGSIGNATURE"},
                                    text_block("answer"), usage=usage())
    doc = text(run([record(main.body())]))
    assert "*thinking:*\n\n```\nlet me see\n```" in doc
    assert "SIGNATURE" not in doc
