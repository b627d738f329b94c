"""Fuzzing the transcript adapters through the whole reconstruction core.

Claude Code lines and JSONL-store-harness records are built from realistic templates
(every line shape DESIGN §4 names: text, thinking, tool_use, tool_result with a
structured ``toolUseResult``, images, compaction boundaries and summaries,
agent_progress copies, task notifications, Go field names), then ANY field at any depth
is replaced by an arbitrary JSON value (ints past int64, floats, wrong types, nested
containers) or deleted, and lines are truncated, mis-encoded or replaced by garbage.
The bodies go, as stored records of one session (a main thread plus sub-agents, one
sometimes unreadable), through ``reconstruct_records``.

Properties (beyond the fixed bodies of tests/reconstruct/test_adapters.py):
- no exception, whatever the bodies hold;
- every count and duration in the telemetry is >= 0, every ``total`` is the sum of its
  parts, and the session's counts are the sums of its threads';
- the artefact is UTF-8 with every fence closed, and the telemetry file is JSON;
- the same records give the same bytes in either order (invariant 6).
"""

from __future__ import annotations

import copy
import hashlib

import msgspec
from hypothesis import strategies as st

from abcd_daemon.errors import ReadRefused
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct_records
from abcd_daemon.store.record import Record, format_rfc3339_ns

from ..reconstruct.support import annotate
from .fuzzing import dumps, fuzz, json_values

SHA = "c" * 40
SESSION = "fuzz-session-0001"
AGENTS = ["a1111111", "a2222222", "acompact-3"]
T = "2026-01-01T00:00:%02d.000Z"


def _usage():
    return {"input_tokens": 10, "output_tokens": 20, "cache_creation_input_tokens": 30,
            "cache_read_input_tokens": 40}


def cc_templates(agent: str) -> list[dict]:
    """One of each Claude Code line shape."""
    env = {"sessionId": SESSION, "isSidechain": bool(agent), "version": "2.1.90",
           "cwd": "/repo", "gitBranch": "main", "parentUuid": None}
    if agent:
        env["agentId"] = agent
    blocks = [
        {"type": "text", "text": "hello"},
        {"type": "thinking", "thinking": "hmm", "signature": "c2ln"},
        {"type": "tool_use", "id": "toolu_1", "name": "Task",
         "input": {"prompt": "go", "subagent_type": "Explore"}},
        {"type": "image", "source": {"type": "base64", "data": "aGk="}},
        {"type": "server_tool_use", "id": "srv", "text": "searched"},
    ]
    lines = [
        {"type": "user", "message": {"role": "user", "content": "start"}},
        *({"type": "assistant", "requestId": "req_1",
           "message": {"id": "msg_1", "model": "claude-opus-4-7", "type": "message",
                       "role": "assistant", "content": [b], "stop_reason": None,
                       "usage": _usage()}} for b in blocks),
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False,
             "content": [{"type": "text", "text": f"agentId: {AGENTS[0]} done"}]}]},
         "toolUseResult": {"status": "completed", "agentId": AGENTS[0]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_2",
             "content": "Async agent launched"}]},
         "toolUseResult": {"isAsync": True, "status": "async_launched", "agentId": AGENTS[1]}},
        {"type": "system", "subtype": "compact_boundary", "content": "compacted"},
        {"type": "user", "isCompactSummary": True, "message": {"role": "user",
                                                               "content": "summary"}},
        {"type": "progress", "data": {"type": "agent_progress", "message": {
            "type": "assistant", "message": {"id": "msg_9", "usage": _usage()}}}},
        {"type": "attachment", "attachment": {"type": "queued_command", "prompt":
            f"<task-notification>\n<task-id>{AGENTS[1]}</task-id>\n"
            "<status>completed</status>\n</task-notification>"}},
        {"type": "assistant", "message": {"id": "msg_2", "model": "claude-sonnet-4-6",
                                          "role": "assistant", "stop_reason": "end_turn",
                                          "content": [{"type": "text", "text": "bye"}],
                                          "usage": _usage()}},
        {"type": "summary", "summary": "s", "leafUuid": "x"},
        {"type": "brand-new-kind", "payload": 1},
    ]
    out = []
    for n, line in enumerate(lines):
        out.append({**env, "uuid": f"{agent or 'main'}-{n}", "timestamp": T % (n % 60), **line})
    return out


def store_templates(agent: str) -> list[dict]:
    """One of each store-harness record shape (snake_case and Go field names)."""
    env = {"session_id": SESSION, "agent_id": agent, "is_sidechain": bool(agent),
           "parent_uuid": None}
    lines = [
        {"type": "message", "message": {"role": "user", "content": [
            {"type": "text", "text": "start"}]}},
        {"type": "message", "message": {"role": "assistant", "model": "m1", "content": [
            {"type": "text", "text": "hi"}, {"type": "thinking", "thinking": "t"},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"p": 1}}]},
         "usage": {"input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 3,
                   "cache_write_tokens": 4}},
        {"type": "message", "message": {"role": "tool", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok",
             "is_error": True}]}},
        {"type": "boundary", "boundary": {"kind": "compaction"}},
        {"type": "message", "message": {"role": "assistant", "content": [
            {"type": "compact_boundary"}]}},
        {"Type": "message", "UUID": "go-1", "SessionID": SESSION,
         "Message": {"Role": "assistant", "Model": "m2",
                     "Content": [{"Type": "text", "Text": "go names"}]},
         "Usage": {"InputTokens": 5, "OutputTokens": 6}},
        {"type": "message", "message": {"role": "system", "content": "odd role"}},
    ]
    return [{**env, "uuid": f"{agent or 'main'}-{n}", "timestamp": T % n, **line}
            for n, line in enumerate(lines)]


def _paths(value, prefix=()):
    """Every location inside a JSON value (dict keys and list indices)."""
    out = []
    if isinstance(value, dict):
        for key, inner in value.items():
            out.append(prefix + (key,))
            out += _paths(inner, prefix + (key,))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            out.append(prefix + (i,))
            out += _paths(inner, prefix + (i,))
    return out


def _set(root, path, value, delete=False):
    target = root
    for step in path[:-1]:
        target = target[step]
    if delete and isinstance(target, dict):
        del target[path[-1]]
    else:
        target[path[-1]] = value


@st.composite
def mutated_line(draw, template: dict, bad_utf8: str) -> bytes:
    """``template`` with up to three fields replaced or deleted, then maybe damaged;
    ``bad_utf8`` (never|sometimes|always) says whether a non-UTF-8 byte may go in."""
    line = copy.deepcopy(template)
    for _ in range(draw(st.integers(0, 3))):
        paths = _paths(line)
        if not paths:
            break
        path = paths[draw(st.integers(0, len(paths) - 1))]
        _set(line, path, draw(json_values), delete=draw(st.booleans()))
    if draw(st.integers(0, 9)) == 0:  # occasionally not an object at all
        line = draw(json_values)
    data = (dumps(line) if draw(st.booleans()) else msgspec.json.encode(line).decode()).encode()
    damage = draw(st.integers(0, 19))
    if damage == 0 and data:  # a truncated line (a capture cut mid-write)
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif damage == 2:
        data = draw(st.binary(max_size=40)).replace(b"\n", b"")
    if bad_utf8 == "always" or (bad_utf8 == "sometimes" and damage == 1):
        quotes = [i for i, c in enumerate(data) if c == 0x22]  # a byte inside a string
        if quotes:
            at = quotes[draw(st.integers(0, len(quotes) - 1))] + 1
            bad = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"]))
            data = data[:at] + bad + data[at:]
    return data


@st.composite
def bodies(draw, agent: str, harnesses=(cc_templates, store_templates),
           bad_utf8: str = "") -> bytes:
    harness = draw(st.sampled_from(harnesses))
    templates = harness(agent)
    chosen = draw(st.lists(st.sampled_from(templates), min_size=0, max_size=12))
    # Invalid UTF-8 inside store-harness lines is the known bug tested on its own below.
    bad_utf8 = bad_utf8 or ("sometimes" if harness is cc_templates else "never")
    lines = [draw(mutated_line(t, bad_utf8)) for t in chosen]
    return b"\n".join(lines) + draw(st.sampled_from([b"\n", b"", b"\n\n  \n"]))


_free = st.text(max_size=20)


@st.composite
def sessions(draw):
    loaded = []
    agents = [""] + draw(st.lists(st.sampled_from(AGENTS), unique=True, max_size=3))
    if len(agents) > 1 and draw(st.integers(0, 4)) == 0:
        agents = agents[1:]  # no main thread stored
    for n, agent in enumerate(agents):
        body = draw(bodies(agent))
        record = Record(
            session_id=SESSION, root_commit=SHA, source_sha256=hashlib.sha256(body).hexdigest(),
            captured_at=format_rfc3339_ns(1_767_225_600_000_000_000 + n), agent_id=agent,
            agent_type=draw(_free) if agent else "",
            parent_agent_id=draw(st.sampled_from(["", *AGENTS])) if agent else "",
            spawn_depth=draw(st.integers(0, 5)) if agent else 0,
            spawn_tool_use_id=draw(st.sampled_from(["", "toolu_1", "toolu_2"])) if agent else "",
            spawn_attribution=draw(st.sampled_from(["sidecar", "transcript", "unattributed"]))
            if agent else "",
            lineage_source="hook", name=f"20260101T000000.{n:09d}Z-{SESSION}-{agent or 'main'}.md",
            body_bytes=len(body))
        payload = body
        if draw(st.integers(0, 9)) == 0:
            payload = ReadRefused(f"record /store/x/{record.name} is unreadable",
                                  reason="unreadable")
        loaded.append((record, payload))
    if draw(st.integers(0, 5)) == 0:  # a losing duplicate and another session's record
        record, body = loaded[0]
        twin = msgspec.structs.replace(record, name="00-" + record.name)
        loaded.append((twin, body))
        other = msgspec.structs.replace(record, session_id="other-session", name="zz-other.md")
        loaded.append((other, body))
    opts = ReconstructOptions(session_id=SESSION, mode=draw(st.sampled_from(["full", "spine"])),
                              max_block_bytes=draw(st.sampled_from([0, 1, 7, 64, 8192])))
    return loaded, opts


def _non_negative(value, where="telemetry"):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        assert value >= 0, f"{where} is {value}"
    elif isinstance(value, dict):
        for key, inner in value.items():
            _non_negative(inner, f"{where}.{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            _non_negative(inner, f"{where}[{i}]")


def _sums(tokens, turns):
    assert tokens.total == (tokens.input + tokens.output + tokens.cache_creation_input
                            + tokens.cache_read_input)
    assert turns.total == turns.user + turns.assistant


@fuzz(sessions(), examples=150)
def test_any_values_in_any_field_reconstruct_with_honest_non_negative_telemetry(case):
    loaded, opts = case
    r = reconstruct_records(SHA, loaded, opts, now_ns=1)
    t = r.telemetry
    _non_negative(msgspec.to_builtins(t))
    _sums(t.tokens, t.turns)
    for agent in t.agents:
        _sums(agent.tokens, agent.turns)
    for field in ("input", "output", "cache_creation_input", "cache_read_input",
                  "api_responses", "usage_lines_seen"):
        assert getattr(t.tokens, field) == sum(getattr(a.tokens, field) for a in t.agents)
    assert t.turns.total == sum(a.turns.total for a in t.agents)
    c = t.completeness
    assert c.records_used <= c.records_found == len(loaded)
    # every record is either used (named by its thread) or reported as dropped
    used = {a.record for a in t.agents}
    assert len(used) == c.records_used
    assert used | {d.record for d in c.dropped_records} == {rec.name for rec, _ in loaded}
    doc = r.artefact.decode("utf-8")
    annotate(doc)  # raises if a fence is left open
    assert r.artefact_bytes == len(r.artefact)
    assert msgspec.json.decode(r.telemetry_json())["session_id"] == SESSION
    again = reconstruct_records(SHA, list(reversed(loaded)), opts, now_ns=1)
    assert again.artefact == r.artefact
    assert again.telemetry_json() == r.telemetry_json()


@st.composite
def store_bodies_with_bad_bytes(draw):
    return draw(bodies("", harnesses=(store_templates,), bad_utf8="always"))


@fuzz(store_bodies_with_bad_bytes(), examples=100)
def test_a_store_harness_body_with_bytes_that_are_not_utf8_still_reconstructs(body):
    record = Record(session_id=SESSION, root_commit=SHA, source_sha256="0" * 64,
                    captured_at=format_rfc3339_ns(1), name="r.md", body_bytes=len(body))
    r = reconstruct_records(SHA, [(record, body)], ReconstructOptions(session_id=SESSION), now_ns=1)
    _non_negative(msgspec.to_builtins(r.telemetry))
