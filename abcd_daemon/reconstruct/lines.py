"""Splitting a record body into JSON lines, leniently: shared by every adapter.

Rules:
- One JSON value per non-blank line; a body need not be UTF-8 and may end in a
  truncated line. A line that is not JSON is counted ``unparseable`` (a truncated
  capture shows as exactly one, its last line) and skipped.
- A line that is JSON but not valid UTF-8, or that escapes an unpaired surrogate, is
  repaired (replacement characters) and counted ``not_utf8``, so one bad byte does not
  cost a whole turn and no unencodable string travels further.
- A line that is JSON of a shape the adapter's typed decoder refuses is handed to the
  adapter's lenient path as a plain Python value.

Never raises on any bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

from .model import ThreadBuilder

#: A decoded line: either the adapter's typed struct or, from the lenient path, a plain
#: Python value (dict, list, scalar) the adapter must inspect itself.
Decoded = Any


def _repair(raw: bytes) -> bytes | None:
    """Re-encode a JSON line with every invalid byte and unpaired surrogate replaced;
    ``None`` if it is not JSON at all."""
    try:
        value = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    try:
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "replace")
    except (ValueError, RecursionError):
        return None


def _decode_line(raw: bytes, decode: Callable[[bytes], Any],
                 builder: ThreadBuilder) -> tuple[Decoded, bytes, bool]:
    """One line decoded. Raises DecodeError or RecursionError when it is not JSON."""
    try:
        return decode(raw), raw, True
    except msgspec.ValidationError:
        return msgspec.json.decode(raw), raw, False
    except msgspec.DecodeError:
        fixed = _repair(raw)
        if fixed is None:
            raise
        builder.not_utf8()
        try:
            return decode(fixed), fixed, True
        except msgspec.ValidationError:
            return msgspec.json.decode(fixed), fixed, False


def decoded_lines(body: bytes | Iterable[bytes], decode: Callable[[bytes], Any],
                  builder: ThreadBuilder) -> Iterator[tuple[Decoded, bytes, bool]]:
    """Yield ``(value, raw_line, typed)`` for every JSON line of ``body`` (the bytes, or
    its lines without their newlines, as :meth:`~abcd_daemon.store.body.RecordBody.lines`
    yields them). Before each yield ``builder.line_no`` is set to the line's 0-based
    index among all of the body's lines (blank ones included), so a streaming reader
    can find the line again.

    ``typed`` is True when ``decode`` (the adapter's typed decoder) accepted the line,
    False when the value comes from the generic decoder. Lines that are not JSON (or
    nest deeper than a decoder will follow) are counted on ``builder``, not yielded.
    """
    lines = body.split(b"\n") if isinstance(body, (bytes, bytearray)) else body
    for n, raw in enumerate(lines):
        if not raw or raw[0] != 0x7B:  # not "{": blank, or something unusual
            if not raw.strip():
                continue
        try:
            item = decode(raw), raw, True  # the common case, without a call in between
        except (msgspec.DecodeError, RecursionError):
            try:
                item = _decode_line(raw, decode, builder)
            except (msgspec.DecodeError, RecursionError):
                builder.unparseable()
                continue
        builder.line_no = n
        yield item
