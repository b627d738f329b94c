"""The sub-agent payload-gap marker's value (written and read by :mod:`.notes`).

A value only, so the wire (``StagedReply.gap``) can carry it without loading the
store's file-handling modules into every CLI start.
"""

# No `from __future__ import annotations`: a wire type (see abcd_daemon/wire/messages.py).

import msgspec


class GapMarker(msgspec.Struct, kw_only=True):
    schema: int = 1
    first_seen: str = ""
    last_seen: str = ""
    count: int = 0
    event: str = ""
