"""Fuzzing the fenced writer and the renderer (invariant 7: everything inside a fence is
something somebody said; everything outside one is this document).

tests/reconstruct/test_containment.py plants a fixed list of structures with backtick
runs up to 12 in four slots. Here: forged headings, markers, table rows, cap lines and
fences of ANY length (up to 400 backticks, with info strings, tildes, 0-6 spaces of
indent and every line ending a Markdown reader honours — ``\\n``, ``\\r\\n``, ``\\r``)
go into every place transcript text reaches the artefact — user text, assistant text,
thinking, tool results (string and list forms), tool inputs, unknown block types, the
store harness's text — and into every label slot (tool names, models, block type
names, agent types), under both modes and several block caps. Forged structures name
the session's REAL agent too, so a forgery cannot hide behind a fake id.

How a leak would show: every content slot ends on a line carrying the token
:data:`SAID`, so a fence that closed early would put that line outside it. Asserted:
- the artefact's fences all close (CommonMark rule, ``support.annotate``);
- :data:`SAID` never appears outside a fence, and no outside line begins with a label
  token (labels appear only after words the document chose);
- each structure the document asserts appears exactly as often as the document has it:
  one ``# Session``, one ``## Main thread``, one ``## Agent `<id>` `` per real agent and
  no other, every ``### Turn`` line is a real turn heading, every SPAWNED/JOINED marker
  names a real agent, every table row has its 10 columns;
- every uncapped content block is reproduced verbatim, as ``fence(content)``;
- ``fence`` and ``code`` alone: any text comes back exactly from inside its fence, and
  an inline code span cannot be closed from within.
"""

from __future__ import annotations

import json
import re

from hypothesis import strategies as st

from abcd_daemon.reconstruct import ReconstructOptions, reconstruct_records
from abcd_daemon.reconstruct.fence import MAX_LABEL_BYTES, cell, code, fence, label, plain

from ..reconstruct.support import SHA, SESSION, annotate, outside_fences, record
from .fuzzing import fuzz

SAID = "ZQXSAID"  # in every content slot
NAMED = "ZQXLABEL"  # in every label slot
REAL = "real1"  # the sub-agent that really exists
LOOSE = "loose2"  # an unattributed one

_ticks = st.integers(0, 400).map(lambda n: "`" * n)
_STRUCTURES = [
    f"## Agent `{REAL}`", "## Agent `{token}`", "## Main thread", "# Session x",
    "## Unattributed sub-agents", "## Completeness", "### Turn 1 — user",
    "### Turn 99 — assistant", f"> **[SPAWNED** agent `{REAL}` (Explore) here **]**",
    f"> **[JOINED** agent `{REAL}` here **]**",
    "> **[COMPACTED]** the model's context was compacted here",
    f"| `{REAL}` | Explore | 1 | main thread | main turn 1 | — | — | — | 1 | 1 |",
    "… [9 bytes elided by the per-block cap]", "> … 3 turn(s) omitted in spine mode …",
    "- record: `x.md`", "<script>", "](http://x)",
]


def _pieces(token: str):
    """Forgeries carrying ``token``, fences of any length, line breaks, any text."""
    return st.one_of(
        st.sampled_from(_STRUCTURES).map(lambda s: s.replace("{token}", token) + " " + token),
        _ticks,
        st.tuples(_ticks, st.sampled_from(["", "json", "md", " ", token, "`x"])).map("".join),
        st.integers(0, 40).map(lambda n: "~" * n),
        st.sampled_from(["\n", "\r\n", "\r", "\n\n", " ", "  ", "   ", "    ", "      ", "\t",
                         "\u2028", "\x85", "\x0c"]),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=16),
    )


_piece = _pieces(SAID)
#: Content: forged pieces, then always a final line carrying SAID.
contents = st.lists(_piece, max_size=16).map(lambda ps: "".join(ps) + "\n" + SAID)
#: Labels: forged pieces with the label token at the start or the end.
labels = st.tuples(st.lists(_pieces(NAMED), max_size=5).map("".join), st.booleans()).map(
    lambda t: (NAMED + t[0]) if t[1] else (t[0] + NAMED))
#: A record's own scalars cannot hold a line break (the record format refuses one).
record_labels = labels.map(lambda t: re.sub(r"[\n\r]", " ", t))


def _cc_line(**fields) -> str:
    base = {"sessionId": SESSION, "isSidechain": False, "version": "2.1.90",
            "timestamp": "2026-01-01T00:00:00.000Z"}
    return json.dumps({**base, **fields})


@st.composite
def sessions(draw):
    said = {k: draw(contents) for k in ("user", "text", "thinking", "result", "parts", "input",
                                        "other", "agent_text", "store_text")}
    named = {k: draw(labels) for k in ("tool", "model", "kind")}
    named["agent_type"] = draw(record_labels)
    main = [
        _cc_line(type="user", uuid="u1", message={"role": "user", "content": said["user"]}),
        _cc_line(type="assistant", uuid="a1", message={
            "id": "m1", "model": named["model"], "role": "assistant", "stop_reason": None,
            "content": [{"type": "thinking", "thinking": said["thinking"]}]}),
        _cc_line(type="assistant", uuid="a2", message={
            "id": "m1", "model": named["model"], "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "tu_1", "name": named["tool"],
                         "input": {"prompt": said["input"]}}]}),
        _cc_line(type="user", uuid="u2", toolUseResult={"status": "completed", "agentId": REAL},
                 message={"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": "tu_1", "content": said["result"]},
                     {"type": "tool_result", "tool_use_id": "tu_x",
                      "content": [{"type": "text", "text": said["parts"]}]}]}),
        _cc_line(type="assistant", uuid="a3", message={
            "id": "m2", "role": "assistant", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": said["text"]},
                        {"type": named["kind"], "text": said["other"]}]}),
    ]
    agent = [
        _cc_line(type="user", uuid="s1", agentId=REAL, isSidechain=True,
                 message={"role": "user", "content": "go"}),
        _cc_line(type="assistant", uuid="s2", agentId=REAL, isSidechain=True, message={
            "id": "sm1", "role": "assistant", "content": [{"type": "text",
                                                          "text": said["agent_text"]}]}),
    ]
    store = [json.dumps({"uuid": "r1", "session_id": SESSION, "agent_id": LOOSE,
                         "type": "message", "message": {"role": "assistant", "content": [
                             {"type": "text", "text": said["store_text"]}]}})]
    loaded = [
        record(("\n".join(main) + "\n").encode()),
        record(("\n".join(agent) + "\n").encode(), REAL, spawn_tool_use_id="tu_1",
               spawn_depth=1, agent_type=named["agent_type"]),
        record(("\n".join(store) + "\n").encode(), LOOSE, spawn_attribution="unattributed",
               agent_type=named["agent_type"]),
    ]
    opts = ReconstructOptions(session_id=SESSION, mode=draw(st.sampled_from(["full", "spine"])),
                              max_block_bytes=draw(st.sampled_from([0, 0, 1, 5, 100, 8192])))
    return loaded, opts, said


_TURN = re.compile(r"### Turn \d+ — (user|assistant)"
                   r"( \(compaction summary\))?( \(sidechain\))?( · .+)?")
_MARKER = re.compile(r"> \*\*\[(SPAWNED|JOINED)\*\* agent `([^`]+)` ")


@fuzz(sessions(), examples=120)
def test_forged_structure_in_any_slot_stays_inside_a_fence_and_is_reproduced(case):
    loaded, opts, said = case
    r = reconstruct_records(SHA, loaded, opts, now_ns=1)
    doc = r.artefact.decode("utf-8")
    annotate(doc)  # every fence closes
    outside = outside_fences(doc)
    assert not [line for line in outside if SAID in line]
    assert not [line for line in outside if line.lstrip().startswith(NAMED)]
    headings = [line for line in outside if line.startswith("#")]
    assert headings.count(f"# Session {SESSION}") == 1
    assert sum(line.startswith("# ") for line in headings) == 1
    assert headings.count("## Main thread") == 1
    assert sorted(h for h in headings if h.startswith("## Agent `")) == [
        f"## Agent `{LOOSE}`", f"## Agent `{REAL}`"]
    for line in headings:
        if line.startswith("### "):
            assert _TURN.fullmatch(line), line
        else:
            assert line in (f"# Session {SESSION}", "## How to read this document",
                            "## Completeness", "## Agent timeline", "## Main thread",
                            f"## Agent `{REAL}`", f"## Agent `{LOOSE}`",
                            "## Unattributed sub-agents"), line
    for line in outside:
        marker = _MARKER.match(line)
        if marker:
            assert marker.group(2) == REAL, line
        if line.startswith("| "):
            assert len(re.findall(r"(?<!\\)\|", line)) == 11, line
    # Reproduced verbatim: text is never capped; the rest only under no cap.
    for key in ("user", "text", "agent_text", "store_text"):
        assert fence(said[key]) in doc, key
    if opts.max_block_bytes == 0:
        for key in ("thinking", "result", "parts", "other"):
            assert fence(said[key]) in doc, key


_any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
_fency_text = st.lists(st.one_of(_piece, _any_text), max_size=20).map("".join)


@fuzz(st.tuples(_fency_text, st.sampled_from(["", "json"])), examples=400)
def test_any_text_comes_back_exactly_from_inside_its_fence(case):
    content, lang = case
    # Between lines this document writes (the renderer always starts a fence on a new line).
    doc = "intro\n\n" + fence(content, lang) + "\noutro\n"
    lines = annotate(doc)
    inside = [line for line, is_inside in lines if is_inside]
    expected = re.split(r"\r\n|\r|\n", content if content.endswith("\n") else content + "\n")
    assert inside == expected[:-1]
    assert [line for line, is_inside in lines if not is_inside][-2:] == ["outro", ""]


def _code_span_content(span: str) -> str:
    """CommonMark: a code span opened by a run of N backticks closes at the next run of
    exactly N; return what it holds (never closing early means the span is whole)."""
    n = len(span) - len(span.lstrip("`"))
    body = span[n:]
    for m in re.finditer(r"`+", body):
        if len(m.group()) == n:
            return body[: m.start()] + ("" if m.end() == len(body) else "<<CLOSED EARLY>>")
    return "<<NEVER CLOSED>>"


@fuzz(_fency_text, examples=400)
def test_labels_and_code_spans_are_one_capped_line_that_cannot_be_closed_from_within(value):
    for out in (label(value), code(value), cell(value)):
        assert not re.search(r"[\n\r\u2028\u2029\x85]", out)
    assert len(label(value).encode("utf-8")) <= MAX_LABEL_BYTES
    assert "|" not in cell(value).replace("\\|", "")
    # the span holds the label, padded with one space a side when it needs it
    assert _code_span_content(code(value)) in (plain(value), f" {plain(value)} ")
