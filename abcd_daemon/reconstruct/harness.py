"""Which adapter reads a record body: one decision per body, from its own lines.

A record does not say which harness wrote it, so the body is sniffed: the first line
that is a JSON object decides. A store-harness record has snake_case ``session_id`` /
``parent_uuid`` and ``type`` ``message`` or ``boundary``; anything else is read as
Claude Code, whose adapter counts lines it does not recognise rather than failing.
Never raises on any bytes.
"""

from __future__ import annotations

from typing import Any

import msgspec

from . import claude_code, store_harness
from .model import Transcript

#: How many leading lines are sniffed before defaulting to Claude Code.
_SNIFF_LINES = 16


class _Sniff(msgspec.Struct):
    type: Any = None
    session_id: Any = None
    parent_uuid: Any = None
    sessionId: Any = None
    parentUuid: Any = None


_DECODE = msgspec.json.Decoder(_Sniff).decode


def harness_of(body: bytes) -> str:
    """``"jsonl-store"`` or ``"claude-code"`` for a record body."""
    start = 0
    for _ in range(_SNIFF_LINES):
        end = body.find(b"\n", start)
        raw = body[start:] if end < 0 else body[start:end]
        start = end + 1
        try:
            line = _DECODE(raw)
        except msgspec.DecodeError:
            line = None
        if line is None:
            if end < 0:
                break
            continue
        if line.sessionId is not None or line.parentUuid is not None:
            return claude_code.HARNESS
        if (line.session_id is not None or line.parent_uuid is not None) and (
                line.type in ("message", "boundary")):
            return store_harness.HARNESS
        if end < 0:
            break
    return claude_code.HARNESS


def parse_body(body: bytes) -> Transcript:
    """The transcript of one record body, read by the adapter its lines call for."""
    if harness_of(body) == store_harness.HARNESS:
        return store_harness.parse(body)
    return claude_code.parse(body)
