"""Builders for reconstruction tests: Claude Code transcripts line by line, stored
records, and a reader that separates what the artefact says from what it quotes."""

from __future__ import annotations

import hashlib
import json
import re

from abcd_daemon.reconstruct import ReconstructOptions, reconstruct_records
from abcd_daemon.store.record import (Record, format_record, format_rfc3339_ns,
                                      parse_record, record_filename)

SHA = "1" * 40
SESSION = "5a9221e2-0000-4000-8000-00000000c0de"
#: 2026-01-01T00:00:00Z
T0 = 1_767_225_600


def stamp(seconds: int) -> str:
    """The harness's timestamp form, ``seconds`` after T0."""
    return format_rfc3339_ns((T0 + seconds) * 1_000_000_000)[:-1] + ".000Z"


class CC:
    """A Claude Code transcript written line by line, one second apart by default."""

    def __init__(self, session: str = SESSION, agent_id: str = "", *, start: int = 0,
                 timestamps: bool = True) -> None:
        self.session = session
        self.agent_id = agent_id
        self.clock = start
        self.timestamps = timestamps
        self.lines: list[str] = []
        self.n = 0

    def _base(self, kind: str) -> dict:
        self.n += 1
        line = {"type": kind, "uuid": f"{self.agent_id or 'main'}-{self.n}",
                "sessionId": self.session, "isSidechain": bool(self.agent_id),
                "version": "2.1.90"}
        if self.agent_id:
            line["agentId"] = self.agent_id
        if self.timestamps:
            line["timestamp"] = stamp(self.clock)
            self.clock += 1
        return line

    def raw(self, text: str) -> "CC":
        self.lines.append(text)
        return self

    def line(self, obj: dict) -> "CC":
        self.lines.append(json.dumps(obj))
        return self

    def user(self, content, **extra) -> "CC":
        line = self._base("user")
        line["message"] = {"role": "user", "content": content}
        line.update(extra)
        return self.line(line)

    def result(self, tool_use_id: str, text, *, async_agent: str = "",
               agent_id: str = "") -> "CC":
        extra = {}
        if async_agent:
            extra["toolUseResult"] = {"isAsync": True, "status": "async_launched",
                                      "agentId": async_agent}
        elif agent_id:
            extra["toolUseResult"] = {"status": "completed", "agentId": agent_id}
        return self.user([{"type": "tool_result", "tool_use_id": tool_use_id,
                           "content": text}], **extra)

    def assistant(self, msg_id: str | None, *blocks: dict, usage: dict | None = None,
                  stop: str | None = "end_turn", model: str = "claude-opus-4-7",
                  per_block: bool = True, outputs: list[int] | None = None) -> "CC":
        """One API response. ``per_block`` writes one line per block (the harness's
        shape), each repeating the usage; ``outputs`` overrides output_tokens per line
        (placeholders) and the stop reason sits on the last line only."""
        groups = [[b] for b in blocks] if per_block else [list(blocks)]
        for i, group in enumerate(groups):
            line = self._base("assistant")
            message = {"model": model, "type": "message", "role": "assistant",
                       "content": group, "stop_reason": stop if i == len(groups) - 1 else None}
            if msg_id is not None:
                message["id"] = msg_id
            if usage is not None:
                u = dict(usage)
                if outputs is not None:
                    u["output_tokens"] = outputs[i]
                message["usage"] = u
            line["message"] = message
            self.line(line)
        return self

    def say(self, msg_id: str, text: str, **kw) -> "CC":
        return self.assistant(msg_id, text_block(text), **kw)

    def other(self, kind: str, **fields) -> "CC":
        line = self._base(kind)
        line.update(fields)
        return self.line(line)

    def body(self) -> bytes:
        return ("\n".join(self.lines) + "\n").encode("utf-8")


def text_block(text: str) -> dict:
    return {"type": "text", "text": text}


def tool_use(tool_id: str, name: str = "Task", **inputs) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": inputs}


def usage(i: int = 10, o: int = 20, cc: int = 30, cr: int = 40) -> dict:
    return {"input_tokens": i, "output_tokens": o, "cache_creation_input_tokens": cc,
            "cache_read_input_tokens": cr}


def notification(agent_id: str) -> str:
    return (f"<task-notification>\n<task-id>{agent_id}</task-id>\n<status>completed</status>"
            f"\n<summary>Agent finished</summary>\n</task-notification>")


_counter = [0]


def record(body: bytes, agent_id: str = "", *, session: str = SESSION,
           captured: int = 0, **lineage) -> tuple[Record, bytes]:
    """A stored record (through the real record format) and its body."""
    _counter[0] += 1
    captured_ns = (T0 + 100_000 + captured) * 1_000_000_000 + _counter[0]
    r = Record(session_id=session, root_commit=SHA,
               source_sha256=hashlib.sha256(body).hexdigest(),
               captured_at=format_rfc3339_ns(captured_ns), agent_id=agent_id,
               lineage_source="hook" if agent_id else "", **lineage)
    if agent_id and "spawn_attribution" not in lineage:
        r.spawn_attribution = "sidecar"
    parsed, stored = parse_record(format_record(r, body), record_filename(r))
    return parsed, stored


def run(loaded, *, session: str = SESSION, now_ns: int = 1, empty_main: bool = False, **opts):
    return reconstruct_records(SHA, loaded, ReconstructOptions(session_id=session, **opts),
                               now_ns=now_ns, empty_main=empty_main)


def text(reconstruction) -> str:
    return reconstruction.artefact.decode("utf-8")


_FENCE_OPEN = re.compile(r"^(`{3,})([^`]*)$")


def annotate(markdown: str) -> list[tuple[str, bool]]:
    """Every line with whether it is inside a fenced block (fence lines count as
    outside), by the CommonMark rule: a fence opens with 3+ backticks and closes on a
    line of at least as many backticks and nothing else. Line breaks are \\n, \\r\\n
    and \\r, as a Markdown reader sees them."""
    out: list[tuple[str, bool]] = []
    width = 0
    for line in re.split(r"\r\n|\r|\n", markdown):
        if not width:
            m = _FENCE_OPEN.match(line)
            if m:
                width = len(m.group(1))
            out.append((line, False))
            continue
        stripped = line.strip(" ")
        indent = len(line) - len(line.lstrip(" "))
        if indent <= 3 and stripped and set(stripped) == {"`"} and len(stripped) >= width:
            width = 0
            out.append((line, False))
        else:
            out.append((line, True))
    assert not width, "a fence was left open"
    return out


def outside_fences(markdown: str) -> list[str]:
    """The lines this document says (not inside any fence, fence lines excluded)."""
    return [line for line, inside in annotate(markdown)
            if not inside and not _FENCE_OPEN.match(line) and set(line.strip()) != {"`"}]


def fenced_text(markdown: str) -> str:
    """Everything quoted inside fences, joined by newlines."""
    return "\n".join(line for line, inside in annotate(markdown) if inside)


def section(markdown: str, heading: str) -> str:
    """One ``## …`` section: from its heading line to the next ``## `` heading that
    stands outside a fence."""
    lines = annotate(markdown)
    start = next(i for i, (line, inside) in enumerate(lines) if line == heading and not inside)
    end = next((i for i in range(start + 1, len(lines))
                if lines[i][0].startswith("## ") and not lines[i][1]), len(lines))
    return "\n".join(line for line, _ in lines[start:end])


def agent_progress(main: CC, agent: str, call: str, msg_id: str, u: dict) -> CC:
    """An ``agent_progress`` line in ``main`` copying response ``msg_id`` of ``agent``
    (spawned by tool call ``call``) with usage ``u``."""
    copy = {"type": "assistant", "message": {"id": msg_id, "type": "message",
            "role": "assistant", "model": "claude-opus-4-7", "content": [text_block("w")],
            "usage": u, "stop_reason": None}}
    return main.other("progress", parentToolUseID=call, toolUseID=f"agent_msg_{msg_id}",
                      data={"type": "agent_progress", "agentId": agent, "message": copy})


def lost_agent_session(**kept_lineage) -> list[tuple[Record, bytes]]:
    """Main: a stored agent (kept1, Explore) and one whose transcript was never stored
    (lost1, Plan), whose responses reached the main file only as agent_progress copies
    (3 lines, 2 responses: 12, 73, 104, 1005 tokens); kept1's record has
    ``kept_lineage``. [main record, kept1 record]."""
    main = (CC().user("two agents")
            .assistant("m1", tool_use("tu_kept", "Agent", subagent_type="Explore", prompt="a"),
                       tool_use("tu_lost", "Agent", subagent_type="Plan", prompt="b"),
                       usage=usage(1, 1, 1, 1), stop="tool_use"))
    agent_progress(main, "lost1", "tu_lost", "p1", usage(10, 5, 100, 1000))
    agent_progress(main, "lost1", "tu_lost", "p1", usage(10, 70, 100, 1000))  # same response
    agent_progress(main, "lost1", "tu_lost", "p2", usage(2, 3, 4, 5))
    agent_progress(main, "kept1", "tu_kept", "k1", usage(7, 7, 7, 7))
    main.result("tu_kept", "kept done", agent_id="kept1")
    main.result("tu_lost", "lost done", agent_id="lost1")
    main.say("m2", "both done", usage=usage(1, 1, 1, 1))
    kept = CC(agent_id="kept1", start=2).user("a").say("k1", "found", usage=usage(7, 7, 7, 7))
    return [record(main.body()), record(kept.body(), "kept1", **kept_lineage)]
