"""A stored session as the wire and the listings carry it (found by :mod:`.sessions`).

A value only, so a client decoding a reply does not load the record reader.
"""

# No `from __future__ import annotations`: a wire type (see abcd_daemon/wire/messages.py).

import msgspec


class SessionRef(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One stored session: where it is, what it is called, when it started."""

    session_id: str
    root_sha: str
    repository: str = ""
    started_at: str = ""
    records: int = 0
    #: ``captured_at`` of its newest record (what ``--since`` compares).
    last_captured_at: str = ""
