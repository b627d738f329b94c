"""What intake reports: the outcome of one spooled payload (:class:`IntakeOutcome`), a
payload kept in ``spool/failed`` (:class:`FailedPayload`) and a discarded one.

Values only: the wire carries them (``retry``, ``staged``, ``discard``), so this module
imports nothing of intake itself, and a client decoding those replies does not load
the resolver, staging or the spool.
"""

# No `from __future__ import annotations`: a wire type (see abcd_daemon/wire/messages.py).

import msgspec


class IntakeOutcome(msgspec.Struct, kw_only=True, omit_defaults=True):
    name: str
    status: str
    event: str = ""
    root_sha: str = ""
    session_id: str = ""
    agent_id: str = ""
    bytes: int = 0
    via: str = ""
    transcript_path: str = ""
    message: str = ""
    warnings: list[str] = []


class FailedPayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: str
    name: str
    path: str
    bytes: int
    event: str = ""
    failed_at: str = ""
    reason: str = ""
    reason_path: str = ""
    error: str = ""


class FailedDiscard(msgspec.Struct, kw_only=True):
    path: str
    bytes: int
    removed: list[str]
