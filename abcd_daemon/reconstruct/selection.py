"""Record selection: one thread per (session, agent), and every loser said out loud.

Rule (reference §6.1): records are grouped by ``agent_id`` (the main thread is ``""``);
within a group ONE is used — readable first, then the longest body, then the newest
``captured_at``, then the filename descending. Every other record is reported as a
:class:`~.schema.DroppedRecord` with its reason; a used record that could not be read is
reported too (its section says so). A record of another session is never used and is
reported as such. Dropped records are sorted by record name.

Pure: no I/O. Reasons carry record basenames only; a directory prefix an error message
carried is removed, so no absolute path reaches the artefact.
"""

from __future__ import annotations

import re

from ..store.record import Record
from .model import Transcript
from .schema import DroppedRecord

#: A directory prefix inside an error message: an absolute POSIX or Windows path up to
#: its last separator. Removing it leaves the basename.
_DIRECTORY = re.compile(r"(?:[A-Za-z]:)?[/\\](?:[^\s'\"/\\]*[/\\])+")


def scrub(message: str) -> str:
    """``message`` with every directory prefix removed (basenames kept)."""
    return _DIRECTORY.sub("", message)


class Thread:
    """One agent's used record: the record, its body (bytes, or a source read on
    demand: :class:`~abcd_daemon.store.body.RecordBody`) or the reason it could not be
    read, and — once parsed — its transcript."""

    __slots__ = ("record", "body", "error", "transcript")

    def __init__(self, record: Record, body, error: str) -> None:
        self.record = record
        self.body = body
        self.error = error
        self.transcript: Transcript | None = None

    @property
    def agent_id(self) -> str:
        return self.record.agent_id

    @property
    def is_main(self) -> bool:
        return not self.record.agent_id


def _readable(body) -> bool:
    return not isinstance(body, BaseException)


def _size(record: Record, body) -> int:
    if isinstance(body, (bytes, bytearray)):
        return len(body)
    return body.length if _readable(body) else record.body_bytes


def _rank(item: tuple[Record, object]) -> tuple:
    record, body = item
    return (_readable(item[1]), _size(record, body), record.captured_ns, record.name)


def _unreadable(body: Exception) -> str:
    return "unreadable: " + scrub(str(body) or type(body).__name__)


def select(session_id: str, loaded: list[tuple[Record, bytes | Exception]]
           ) -> tuple[list[Thread], list[DroppedRecord]]:
    """Reduce ``loaded`` to one :class:`Thread` per agent (the main thread first, then
    sub-agents by agent id) and the list of records not used."""
    groups: dict[str, list[tuple[Record, bytes | Exception]]] = {}
    dropped: list[DroppedRecord] = []
    for record, body in loaded:
        if record.session_id != session_id:
            dropped.append(DroppedRecord(
                record=record.name, agent_id=record.agent_id, bytes=_size(record, body),
                reason=f"it belongs to another session ({record.session_id})"))
            continue
        groups.setdefault(record.agent_id, []).append((record, body))
    threads: list[Thread] = []
    for agent_id in sorted(groups):
        ranked = sorted(groups[agent_id], key=_rank, reverse=True)
        record, body = ranked[0]
        if _readable(body):
            threads.append(Thread(record, bytes(body) if isinstance(body, bytearray) else body, ""))
        else:
            error = _unreadable(body)
            threads.append(Thread(record, None, error))
            dropped.append(DroppedRecord(record=record.name, agent_id=agent_id,
                                         bytes=record.body_bytes, reason=error))
        for loser, loser_body in ranked[1:]:
            reason = (_unreadable(loser_body) if isinstance(loser_body, Exception) else
                      f"a longer or newer record for the same agent was used ({record.name})")
            dropped.append(DroppedRecord(record=loser.name, agent_id=agent_id,
                                         bytes=_size(loser, loser_body), reason=reason))
    dropped.sort(key=lambda d: d.record)
    return threads, dropped
