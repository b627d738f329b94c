"""Which adapter reads a record body: one decision per body, from its own lines.

A record does not say which harness wrote it, so the body is sniffed: the first line
that is a JSON object decides. A store-harness record has snake_case ``session_id`` /
``parent_uuid`` and ``type`` ``message`` or ``boundary``; anything else is read as
Claude Code, whose adapter counts lines it does not recognise rather than failing.
Never raises on any bytes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import msgspec

from . import claude_code, store_harness
from .lean import InMemoryBody, Lean
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


def _head_lines(body: bytes) -> Iterator[bytes]:
    """The first :data:`_SNIFF_LINES` lines of ``body`` (found, not split: it may be big)."""
    start = 0
    for _ in range(_SNIFF_LINES):
        end = body.find(b"\n", start)
        yield body[start:] if end < 0 else body[start:end]
        if end < 0:
            return
        start = end + 1


def harness_of(body) -> str:
    """``"jsonl-store"`` or ``"claude-code"`` for a record body: its bytes, or a source
    with ``lines()`` (:class:`~abcd_daemon.store.body.RecordBody`)."""
    lines = _head_lines(body) if isinstance(body, (bytes, bytearray)) else body.lines()
    try:
        for raw in itertools.islice(lines, _SNIFF_LINES):
            try:
                line = _DECODE(raw)
            except msgspec.DecodeError:
                continue
            if line.sessionId is not None or line.parentUuid is not None:
                return claude_code.HARNESS
            if (line.session_id is not None or line.parent_uuid is not None) and (
                    line.type in ("message", "boundary")):
                return store_harness.HARNESS
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            close()
    return claude_code.HARNESS


def adapter(harness: str):
    """The module of ``harness``'s adapter: its ``parse(body, lean=None)``."""
    return store_harness if harness == store_harness.HARNESS else claude_code


def parse_body(body, lean: Lean | None = None) -> Transcript:
    """The transcript of one record body (bytes, or a source with ``lines()``), read by
    the adapter its lines call for. With ``lean`` (:mod:`.lean`) the turns are held in
    columns and their blocks spilled to a temp file (the transcript's ``source``), for
    :mod:`.refill` to give back."""
    if lean is not None and isinstance(body, (bytes, bytearray)):
        body = InMemoryBody(body)
    harness = harness_of(body)
    if isinstance(body, (bytes, bytearray)):
        return adapter(harness).parse(body, lean)
    return adapter(harness).parse(body.lines(), lean)
