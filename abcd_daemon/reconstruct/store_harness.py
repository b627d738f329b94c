"""Adapter: the JSONL store harness (seed 004) into the one turn model.

A record is ``{uuid, parent_uuid, session_id, agent_id, is_sidechain, timestamp,
type, message, usage, boundary}`` with ``type`` ``message`` or ``boundary``:
- A ``message`` record carries one whole ``llm.Message`` (``role``, ``content`` blocks
  ``{type, text, thinking, id, name, input, tool_use_id, content, is_error}``). The
  record's ``usage`` belongs to that one record (assistant records only, written once),
  so a record IS a response: its de-duplication key is ``record:<uuid>``, and usage on
  a record without a uuid is counted as usage without an id. The format writes a
  message when it is complete, so no response is flagged as unfinished.
- A ``boundary`` record, or a message made of one ``compact_boundary`` block, marks a
  compaction (the records after it re-state the kept tail; they are rendered as stored).
- Roles: ``assistant``; ``user`` and ``tool`` (tool results) read as user turns; any
  other role is counted as unrecognised and not rendered.
- The Go writer may emit field names without JSON tags (``Role``, ``Content``,
  ``ToolUseID``, ``InputTokens``…); the lenient path accepts those as well.

Never raises on any bytes.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .blocks import WireBlock, model_blocks, text_of, wire_content
from .lines import decoded_lines
from .model import ASSISTANT, USER, ThreadBuilder, Transcript
from .values import usage_of, when_key

HARNESS = "jsonl-store"

_BOUNDARY_BLOCK = "compact_boundary"

#: Go field names (no JSON tags) → the snake_case names read here.
_GO_NAMES = {
    "UUID": "uuid", "SessionID": "session_id", "AgentID": "agent_id",
    "IsSidechain": "is_sidechain", "Timestamp": "timestamp", "Type": "type",
    "Message": "message", "Usage": "usage", "Role": "role", "Content": "content",
    "Model": "model", "Text": "text", "Thinking": "thinking", "ID": "id", "Name": "name",
    "Input": "input", "ToolUseID": "tool_use_id", "IsError": "is_error",
}

#: Usage field spellings, per measure: input, output, cache creation, cache read.
_USAGE_NAMES = (
    ("input_tokens", "InputTokens"),
    ("output_tokens", "OutputTokens"),
    ("cache_creation_input_tokens", "cache_creation_tokens", "cache_write_tokens",
     "CacheCreationTokens", "CacheWriteTokens"),
    ("cache_read_input_tokens", "cache_read_tokens", "CacheReadTokens"),
)


class _Message(msgspec.Struct):
    role: Any = None
    model: Any = None
    content: str | list[WireBlock] | None = None


class _Record(msgspec.Struct):
    uuid: Any = None
    is_sidechain: Any = None
    timestamp: Any = None
    type: Any = None
    message: _Message | None = None
    usage: Any = None


_DECODE = msgspec.json.Decoder(_Record).decode
_GENERIC = msgspec.json.Decoder().decode


def _snake(value: object) -> object:
    if isinstance(value, dict):
        return {_GO_NAMES.get(k, k): v for k, v in value.items()}
    return value


def _lenient(value: object, builder: ThreadBuilder) -> _Record | None:
    """A :class:`_Record` from a generic JSON value, keeping every known part."""
    value = _snake(value)
    if not isinstance(value, dict):
        builder.unrecognised()
        return None
    record = _Record(uuid=value.get("uuid"), is_sidechain=value.get("is_sidechain"),
                     timestamp=value.get("timestamp"), type=value.get("type"),
                     usage=value.get("usage"))
    message = _snake(value.get("message"))
    if isinstance(message, dict):
        record.message = _Message(role=message.get("role"), model=message.get("model"),
                                  content=wire_content(message.get("content"), builder,
                                                       rename=_snake))
    return record


def _usage(value: object):
    if not isinstance(value, dict):
        return None
    picked = []
    for names in _USAGE_NAMES:
        picked.append(next((value[n] for n in names if n in value), None))
    return usage_of(*picked)


def parse(body, lean=None) -> Transcript:
    """Read one store-harness record body (bytes, or its lines) into a
    :class:`~.model.Transcript`; ``lean``: see :mod:`.lean`."""
    builder = ThreadBuilder(HARNESS) if lean is None else lean.builder(HARNESS)
    for value, raw, typed in decoded_lines(body, _DECODE, builder):
        if typed and (value.type is None or (
                value.message is not None and value.message.role is None)):
            # Go field names: see the docstring. The typed decoder skipped fields the
            # generic one must read, so bytes that are not UTF-8 there surface only now.
            try:
                value, typed = _GENERIC(raw.decode("utf-8", "replace").encode()), False
            except (msgspec.DecodeError, RecursionError):
                builder.unparseable()
                continue
        record = value if typed else _lenient(value, builder)
        if record is None:
            builder.line("")
            continue
        when = when_key(record.timestamp)
        builder.line(when)
        if record.type == "boundary":
            builder.compaction()
            continue
        message = record.message
        if record.type != "message" or message is None or message.content is None:
            builder.unrecognised()
            continue
        role = message.role
        if role not in (USER, ASSISTANT, "tool"):
            builder.unrecognised()
            continue
        content = message.content
        if not isinstance(content, str) and len(content) == 1 and (
                content[0].type == _BOUNDARY_BLOCK):
            builder.compaction()
            continue
        uuid = text_of(record.uuid)
        is_assistant = role == ASSISTANT
        builder.message(
            ASSISTANT if is_assistant else USER, model_blocks(content, builder),
            response_id=f"record:{uuid}" if is_assistant and uuid else "",
            line_id=uuid, model=text_of(message.model), usage=_usage(record.usage),
            stop_reason=True, when=when, sidechain=record.is_sidechain is True)
    return builder.finish()
