"""The frame rules both codecs share, with no import beyond the standard library.

A frame is a 4-byte big-endian length, then that many payload bytes. A payload whose
first byte is ``{`` is a JSON object; any other is msgpack. The rule is unambiguous:
``{`` (0x7b) opens a msgpack payload only as the bare integer 123, which no message is.
No frame in either direction is longer than :data:`MAX_FRAME`; bodies stream in
:data:`CHUNK`-sized pieces.

:mod:`.codec` (msgspec, both formats, typed) and the CLI's JSON client
(:mod:`abcd_client.json_client`, stdlib ``json``, for verbs whose start-up is the
point) both read these, so neither states a limit or a version of its own.
"""

from __future__ import annotations

import struct

#: The version a Hello states and a Welcome answers; a daemon refuses any other.
PROTOCOL_VERSION = 1
#: No frame in either direction is larger.
MAX_FRAME = 4 << 20
#: The size of the Chunk frames a body streams in.
CHUNK = 1 << 20
#: The length prefix.
LENGTH = struct.Struct(">I")


def is_json(payload: bytes) -> bool:
    """True when ``payload`` is in the JSON format (it opens with ``{``)."""
    return payload[:1] == b"{"
