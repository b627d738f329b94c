"""Adapter: Claude Code JSONL (DESIGN §4) into the one turn model.

What each line shape means here:
- ``user`` / ``assistant`` lines with a ``message`` are conversation. One API response
  is written as one line per content block, each repeating ``message.id`` and the usage;
  :class:`~.model.ThreadBuilder` joins them. A ``user`` line with ``isCompactSummary``
  is the summary written after a compaction.
- ``system`` with ``subtype: compact_boundary`` marks a compaction; other ``system``
  lines, ``summary``, ``attachment``, ``queue-operation``, ``file-history-snapshot``,
  ``permission-mode``, ``last-prompt``, ``cost-state`` and the other housekeeping types
  (:data:`_HOUSEKEEPING`) are recognised and not rendered.
- ``progress`` lines whose data is ``agent_progress`` COPY a sub-agent's responses into
  the main file: they are counted as copies and never as usage. What they name (the
  agent, the spawning call ``parentToolUseID``, the copied response's id and usage) is
  kept: it places an agent, and it is the only usage known of one whose own
  transcript is not stored (reported apart, never in the totals).
- A tool result line's structured ``toolUseResult.agentId`` (and ``agentType``) names
  the sub-agent that result is about: 2.0.x names it nowhere else.
- A tool result whose line says ``status: "async_launched"`` (or whose text says the
  agent was launched) is a background agent's launch acknowledgement, not its result.
  The result arrives later as a ``<task-notification>`` naming the agent (in a user
  line, an attachment or a queued command), or as a ``TaskOutput`` result reporting
  ``<status>completed</status>`` for it.
- Anything else — an unknown ``type``, a JSON value that is not an object, a message
  that is not an object — is counted as unrecognised, never fatal.

Never raises on any bytes.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from .blocks import WireBlock, json_text, model_blocks, text_of, wire_content
from .lines import decoded_lines
from .model import (ASSISTANT, TEXT, TOOL_RESULT, USER, Block, Progress, ThreadBuilder,
                    Transcript)
from .values import usage_of, when_key

HARNESS = "claude-code"

#: Line types that are housekeeping, not conversation: recognised, not rendered.
#: ``cost-state`` (written at the end of every session since 2.1.28x), ``mode``,
#: ``ai-title``, ``agent-color``, ``frame-link``, ``atis-latch``, ``fork-context-ref`` and
#: ``file-history-delta`` are the current harness's own bookkeeping.
_HOUSEKEEPING = frozenset({
    "system", "summary", "attachment", "queue-operation", "file-history-snapshot",
    "file-history-delta", "permission-mode", "mode", "last-prompt", "custom-title",
    "ai-title", "agent-name", "agent-color", "tag", "pr-link", "frame-link", "progress",
    "started", "result", "cost-state", "atis-latch", "fork-context-ref",
})


class _Usage(msgspec.Struct):
    input_tokens: Any = None
    output_tokens: Any = None
    cache_creation_input_tokens: Any = None
    cache_read_input_tokens: Any = None


class _Message(msgspec.Struct):
    id: Any = None
    model: Any = None
    content: str | list[WireBlock] | None = None
    usage: _Usage | None = None
    stop_reason: Any = None


class _Line(msgspec.Struct):
    type: Any = None
    subtype: Any = None
    timestamp: Any = None
    uuid: Any = None
    isSidechain: Any = None
    isCompactSummary: Any = None
    message: _Message | None = None
    toolUseResult: msgspec.Raw = msgspec.Raw()


_DECODE = msgspec.json.Decoder(_Line).decode


class _Result(msgspec.Struct):
    """The parts of a structured ``toolUseResult`` that name a sub-agent."""

    agentId: Any = None
    agentType: Any = None
    status: Any = None


_DECODE_RESULT = msgspec.json.Decoder(_Result).decode
_NO_RESULT = _Result()  # read, never changed


class _Copied(msgspec.Struct):
    message: _Message | None = None


class _ProgressData(msgspec.Struct):
    type: Any = None
    agentId: Any = None
    message: _Copied | None = None


class _Progress(msgspec.Struct):
    parentToolUseID: Any = None
    data: _ProgressData | None = None


_DECODE_PROGRESS = msgspec.json.Decoder(_Progress).decode
#: Larger ``toolUseResult`` objects are not searched for a launch acknowledgement.
_ACK_MAX = 4096

# Task notifications. In a decoded text; and in a raw JSON line (an attachment or a
# queued command), where ``<`` may arrive escaped as \u003c.
_NOTIFIED = re.compile(r"<task-id>([A-Za-z0-9._-]{1,128})</task-id>")
_TASK_OUTPUT = re.compile(r"<task_id>([A-Za-z0-9._-]{1,128})</task_id>")
_LT = rb"(?:<|\\u003[cC])"
_GT = rb"(?:>|\\u003[eE])"
_RAW_NOTIFIED = re.compile(_LT + rb"task-id" + _GT + rb"([A-Za-z0-9._-]{1,128})" + _LT)


def _notified(blocks: list[Block]) -> list[str]:
    """Agent ids whose result these user blocks deliver: a task notification naming
    them, or a TaskOutput result reporting them completed."""
    ids: list[str] = []
    for block in blocks:
        text = block.text
        if (block.kind == TEXT or block.kind == TOOL_RESULT) and "<" in text:
            if "<task-notification>" in text:
                ids += _NOTIFIED.findall(text)
            if "<task_id>" in text and "<status>completed</status>" in text:
                ids += _TASK_OUTPUT.findall(text)
    return ids


def _name_agent(blocks: list[Block], agent: str, agent_type: str) -> None:
    """Give the line's one tool result the agent its structured result names (a line
    with several results cannot say which one it describes)."""
    results = [b for b in blocks if b.kind == TOOL_RESULT]
    if agent and len(results) == 1:
        results[0].agent = agent
        results[0].agent_type = agent_type


def _raw_notified(raw: bytes) -> list[str]:
    """Agent ids a housekeeping line (attachment, queued command) notifies."""
    if b"task-notification" not in raw:
        return []
    return [m.decode() for m in _RAW_NOTIFIED.findall(raw)]


def _result(raw: msgspec.Raw) -> _Result:
    """The structured result's agent fields (all None when it names none)."""
    if len(raw) and b'"agent' in bytes(raw):
        try:
            return _DECODE_RESULT(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            pass
    return _NO_RESULT


def _progress(raw: bytes) -> Progress | None:
    """What an ``agent_progress`` line names: the agent, the spawning call and the
    copied response's id, usage and model. None when it names no agent."""
    try:
        line = _DECODE_PROGRESS(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    data = line.data
    if data is None or data.type != "agent_progress" or not text_of(data.agentId):
        return None
    copied = data.message.message if data.message is not None else None
    usage = copied.usage if copied is not None else None
    return Progress(
        text_of(data.agentId), text_of(line.parentToolUseID), "",
        text_of(copied.id) if copied is not None else "",
        usage_of(usage.input_tokens, usage.output_tokens, usage.cache_creation_input_tokens,
                 usage.cache_read_input_tokens) if usage is not None else None,
        text_of(copied.model) if copied is not None else "")


def _lenient(value: object, builder: ThreadBuilder) -> _Line | None:
    """Build a :class:`_Line` from a generic JSON value the typed decoder refused,
    keeping every part whose shape is known. ``None`` for a value that is no line."""
    if not isinstance(value, dict):
        builder.unrecognised()
        return None
    line = _Line(type=value.get("type"), subtype=value.get("subtype"),
                 timestamp=value.get("timestamp"), uuid=value.get("uuid"),
                 isSidechain=value.get("isSidechain"),
                 isCompactSummary=value.get("isCompactSummary"))
    result = value.get("toolUseResult")
    if result is not None:
        line.toolUseResult = msgspec.Raw(json_text(result).encode())
    message = value.get("message")
    if not isinstance(message, dict):
        return line
    usage = message.get("usage")
    line.message = _Message(
        id=message.get("id"), model=message.get("model"),
        content=wire_content(message.get("content"), builder),
        stop_reason=message.get("stop_reason"),
        usage=_Usage(**{k: usage.get(k) for k in _Usage.__struct_fields__})
        if isinstance(usage, dict) else None)
    return line


def parse(body, lean=None) -> Transcript:
    """Read one Claude Code record body (bytes, or its lines) into a
    :class:`~.model.Transcript`; ``lean``: see :mod:`.lean`."""
    builder = ThreadBuilder(HARNESS) if lean is None else lean.builder(HARNESS)
    for value, raw, typed in decoded_lines(body, _DECODE, builder):
        line = value if typed else _lenient(value, builder)
        if line is None:
            builder.line("")
            continue
        when = when_key(line.timestamp)
        builder.line(when)
        kind = line.type if isinstance(line.type, str) else ""
        message = line.message
        if kind == USER or kind == ASSISTANT:
            if message is None or message.content is None:
                builder.unrecognised()
                continue
            usage = message.usage
            result = line.toolUseResult  # a launch acknowledgement is a small object
            named = _result(result) if kind == USER else _NO_RESULT
            line_ack = kind == USER and (named.status == "async_launched" or (
                0 < len(result) <= _ACK_MAX and b'"async_launched"' in bytes(result)))
            blocks = model_blocks(message.content, builder, async_ack=line_ack)
            if named.agentId is not None:
                _name_agent(blocks, text_of(named.agentId), text_of(named.agentType))
            builder.message(
                kind, blocks,
                response_id=text_of(message.id) if kind == ASSISTANT else "",
                line_id=text_of(line.uuid), model=text_of(message.model),
                usage=usage_of(usage.input_tokens, usage.output_tokens,
                               usage.cache_creation_input_tokens,
                               usage.cache_read_input_tokens) if usage else None,
                stop_reason=bool(message.stop_reason), when=when,
                sidechain=line.isSidechain is True,
                compact_summary=line.isCompactSummary is True,
                notified=_notified(blocks) if kind == USER else None)
        elif kind == "system" and line.subtype == "compact_boundary":
            builder.compaction(when)
        elif kind == "progress":
            if b'"agent_progress"' in raw:
                progress = _progress(raw)
                if progress is not None:
                    progress.when = when
                builder.copied(progress)
        elif kind in _HOUSEKEEPING:
            if kind in ("attachment", "queue-operation"):
                ids = _raw_notified(raw)
                if ids:
                    builder.notify(ids, when)
        else:
            builder.unrecognised()
    return builder.finish()
