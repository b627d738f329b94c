"""A staged or quarantined entry as listings and the wire carry it (listed by
:mod:`.staged`).

Values only, so a client decoding a reply does not load the queue's file handling.
"""

# No `from __future__ import annotations`: a wire type (see abcd_daemon/wire/messages.py).

import msgspec

from ..store.meta import Lineage


class StagedEntry(Lineage, kw_only=True, omit_defaults=True):
    """One staged transcript as listed, with its sidecar's :class:`Lineage`. ``error``
    non-empty means: never drained."""

    root_sha: str
    name: str
    path: str
    bytes: int
    session_id: str = ""
    source_path: str = ""
    sidecar_path: str = ""
    staged_at: str = ""
    staged_ns: int = 0
    overdue: bool = False
    legacy: bool = False
    unsettled: bool = False
    error: str = ""

    @property
    def key(self) -> str:
        return self.agent_id or self.session_id


class QuarantinedEntry(msgspec.Struct, kw_only=True, omit_defaults=True):
    root_sha: str
    name: str
    path: str
    bytes: int
    session_id: str = ""
    agent_id: str = ""
    reason: str = ""
    reason_path: str = ""
    quarantined_at: str = ""
    error: str = ""
