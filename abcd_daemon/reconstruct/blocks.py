"""Content blocks: the wire shape both harnesses share, and its translation into the
turn model's :class:`~.model.Block`.

Both harnesses write Anthropic-shaped blocks ``{type, text, thinking, id, name, input,
tool_use_id, content, is_error}``. Rules:
- ``text`` → text; ``thinking`` → thinking (its ``signature`` is never read);
  ``tool_use`` → a call with its input kept as raw JSON bytes (``{}`` when absent);
  ``tool_result`` → a result whose text is the string content, or every text part
  joined by newlines, else the content's JSON; ``image`` → named, not carried.
- Any other typed block keeps its type name and whatever text it carries; a block with
  no usable type, and a content item that is not a block, are counted unrecognised (a
  bare string item is still kept, as text).
- A result that says a background agent was launched (``Async agent launched…``, or a
  line the adapter says is a launch acknowledgement) is marked ``async_ack``: it is not
  that agent's result.

Pure; never raises.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import msgspec

from .model import IMAGE, TEXT, THINKING, TOOL_RESULT, TOOL_USE, Block, ThreadBuilder


class WireBlock(msgspec.Struct):
    """One content block as written; fields the harness may fill with anything."""

    type: Any = None
    text: Any = None
    thinking: Any = None
    id: Any = None
    name: Any = None
    input: msgspec.Raw = msgspec.Raw()
    tool_use_id: Any = None
    content: Any = None
    is_error: Any = None


WireContent = str | list[WireBlock] | None

_FIELDS = tuple(f for f in WireBlock.__struct_fields__ if f != "input")
_LAUNCHED = "Async agent launched"


def text_of(value: object) -> str:
    """A string field, or "" when the source put something else there."""
    return value if isinstance(value, str) else ""


def json_text(value: object) -> str:
    """Compact JSON of a decoded value, for content that has no text of its own."""
    try:
        return msgspec.json.encode(value).decode("utf-8", "replace")
    except (TypeError, ValueError, OverflowError, RecursionError):
        return repr(value)


def result_text(content: object) -> str:
    """The text of a tool result's content (see the module docstring)."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        texts = [item.get("text") for item in content
                 if isinstance(item, dict) and item.get("type") == "text"]
        texts = [t for t in texts if isinstance(t, str)]
        if texts:
            return "\n".join(texts)
    return json_text(content)


def wire_content(value: object, builder: ThreadBuilder,
                 rename: Callable[[object], object] = lambda item: item) -> WireContent:
    """Content from a generic JSON value the typed decoder refused, keeping every
    block whose shape is known; ``rename`` maps a block's keys first."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return None
    blocks: list[WireBlock] = []
    for item in map(rename, value):
        if isinstance(item, str):  # a bare string where a block belongs
            builder.unrecognised()
            blocks.append(WireBlock(type="text", text=item))
        elif isinstance(item, dict):
            raw = item.get("input")
            blocks.append(WireBlock(
                **{k: item.get(k) for k in _FIELDS},
                input=msgspec.Raw(json_text(raw).encode() if raw is not None else b"")))
        else:
            builder.unrecognised()
    return blocks


def model_blocks(content: WireContent, builder: ThreadBuilder, *,
                 async_ack: bool = False) -> list[Block]:
    """The turn model's blocks for one line's content."""
    if isinstance(content, str):
        return [Block(TEXT, content)]
    out: list[Block] = []
    for b in content or ():
        kind = b.type
        if kind == "tool_result":
            result = b.content
            text = result if result.__class__ is str else result_text(result)
            ref = b.tool_use_id
            out.append(Block(TOOL_RESULT, text,
                             ref=sys.intern(ref) if ref.__class__ is str else "",
                             is_error=b.is_error is True,
                             async_ack=async_ack or text.startswith(_LAUNCHED)))
        elif kind == "tool_use":
            # Interned: a call's id and its result's are then one string, and names repeat.
            out.append(Block(TOOL_USE, name=sys.intern(text_of(b.name)), ref=sys.intern(text_of(b.id)),
                             raw=bytes(b.input) or b"{}"))
        elif kind == "text":
            text = b.text
            out.append(Block(TEXT, text if text.__class__ is str else ""))
        elif kind == "thinking":
            out.append(Block(THINKING, text_of(b.thinking) or text_of(b.text)))
        elif kind == "image":
            out.append(Block(IMAGE))
        else:
            if not isinstance(kind, str) or not kind:
                builder.unrecognised()
                kind = "unknown"
            payload = text_of(b.text) or text_of(b.thinking)
            if not payload and b.content is not None:
                payload = result_text(b.content)
            out.append(Block(kind, payload))
    return out
