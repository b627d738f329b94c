"""What the artefact says of empty records and of text that says nothing."""

from __future__ import annotations

from .support import CC, outside_fences, record, run, section, text, text_block, usage


def test_a_main_record_holding_no_lines_is_reported_empty_not_absent():
    sub = CC(agent_id="a1").user("x").say("s1", "ok", usage=usage())
    r = run([record(b"\n\n", ""), record(sub.body(), "a1")])
    c = r.telemetry.completeness
    assert c.main_thread_present and c.main_thread_empty
    said = "\n".join(outside_fences(text(r)))
    assert "- main thread: present, EMPTY (its record holds no transcript lines)" in said
    assert "ABSENT" not in said
    assert "This record is EMPTY: it holds no transcript lines." in section(
        text(r), "## Main thread")
    # With no main record at all, it is absent, and the document says what that can mean.
    r = run([record(sub.body(), "a1")])
    assert not r.telemetry.completeness.main_thread_present
    assert not r.telemetry.completeness.main_thread_empty
    assert "- main thread: ABSENT" in text(r)
    assert "abcd never saw its main file empty: the main thread was not captured" in text(r)


def test_a_main_file_seen_empty_is_reported_empty_not_absent_when_no_record_is_stored():
    sub = CC(agent_id="a1").user("x").say("s1", "ok", usage=usage())
    r = run([record(sub.body(), "a1")], empty_main=True)
    c = r.telemetry.completeness
    assert not c.main_thread_present and c.main_thread_empty
    said = "\n".join(outside_fences(text(r)))
    assert "- main thread: EMPTY (the harness's main file was zero bytes when abcd saw it" in said
    assert "ABSENT" not in said
    assert "the main thread is EMPTY, not lost" in section(text(r), "## Main thread")
    # A stored main record outranks the marker: the file grew after it was seen empty.
    main = CC().user("hello").say("m1", "hi", usage=usage())
    r = run([record(main.body()), record(sub.body(), "a1")], empty_main=True)
    assert r.telemetry.completeness.main_thread_present
    assert not r.telemetry.completeness.main_thread_empty


def test_whitespace_only_text_blocks_do_not_become_empty_fences():
    main = (CC().user([text_block("  \n\t "), text_block("real words")])
            .assistant("m1", text_block("\n\n"), text_block("answer"), usage=usage()))
    doc = text(run([record(main.body())]))
    body = section(doc, "## Main thread")
    assert "```\n  \n\t \n```" not in body and "```\n\n\n\n```" not in body
    assert body.count("```\n") == 4  # two fences, each opened and closed
    assert "real words" in body and "answer" in body
