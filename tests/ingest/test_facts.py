"""What a transcript's bytes say: harness, cwds, ids, settledness."""

import hashlib
import json

from abcd_daemon.ingest.facts import CLAUDE_CODE, JSONL_STORE, facts_of

from .conftest import claude_line, store_record


def jsonl(*records) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_claude_code_lines_give_cwds_in_first_seen_order_and_the_session():
    raw = jsonl(claude_line("s1", "/a", 0), claude_line("s1", "/b", 1), claude_line("s1", "/a", 2))
    facts = facts_of(raw)
    assert facts.harness == CLAUDE_CODE
    assert facts.cwds == ("/a", "/b") and facts.session_ids == ("s1",)
    assert facts.sha256 == hashlib.sha256(raw).hexdigest() and facts.size == len(raw)


def test_store_harness_records_are_recognised_without_a_cwd():
    facts = facts_of(jsonl(store_record("s1", 0, agent="a1"), store_record("s1", 1, agent="a1")))
    assert facts.harness == JSONL_STORE
    assert facts.cwds == () and facts.session_ids == ("s1",) and facts.agent_ids == ("a1",)


def test_a_title_only_file_names_no_session():
    facts = facts_of(b'{"type":"summary","summary":"A title","leafUuid":"x"}\n')
    assert facts.harness == "" and facts.lines == 1


def test_broken_and_non_object_lines_are_counted_not_fatal():
    raw = jsonl(claude_line("s1", "/a", 0)) + b"[1, 2]\nnot json\n" + b'{"cwd": 7, "sessionId": null}\n'
    facts = facts_of(raw)
    assert facts.bad_lines == 2 and facts.cwds == ("/a",) and facts.lines == 4


def test_a_cut_last_line_marks_the_transcript_unsettled():
    raw = jsonl(claude_line("s1", "/a", 0)) + b'{"type": "assistant", "mess'
    assert not facts_of(raw).settled
    assert facts_of(jsonl(claude_line("s1", "/a", 0))).settled


def test_a_cwd_key_inside_a_string_is_not_a_cwd():
    line = claude_line("s1", "/real", 0)
    line["message"]["content"] = '{"cwd":"/fake"}'
    line["toolUseResult"] = {"stdout": '"cwd":"/also-fake"'}
    assert facts_of(jsonl(line)).cwds == ("/real",)


def test_facts_call_a_file_a_sidechain_only_when_no_line_says_otherwise():
    side = {"type": "user", "sessionId": "s", "agentId": "a1", "isSidechain": True}
    assert facts_of(jsonl(side, side, {"type": "summary", "summary": "t"})).sidechain
    assert not facts_of(jsonl(side, {**side, "isSidechain": False})).sidechain
    assert not facts_of(jsonl(side, {"type": "user", "sessionId": "s"})).sidechain
    assert not facts_of(jsonl({"type": "summary", "summary": "t"})).sidechain
