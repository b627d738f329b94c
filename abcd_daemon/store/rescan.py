"""Re-redact stored records with the current scanner, and forget a record for good.

``rescan_lane`` contract (DESIGN §3.4, ``abcd history rescan``):
- a record whose ``scanner:`` equals the current scanner's label is skipped unread;
- every other one is re-redacted exactly as capture redacts: its lineage scalars
  framed with its body (``capture.frame``), one ``redact_text`` pass, unframed;
- a record the pass changes is rewritten in place (same file name, so lineage,
  idempotency — ``source_sha256`` is of the raw source — and supersession are
  untouched) through ``atomic_write`` under the lane lock, with the new scanner
  label and its redaction counts raised by what was newly masked; one the pass does
  not change gets only its new label (it has been verified by the current table);
- a record the pass refuses (a residual the current scanner cannot make safe) is
  left as it is and reported: ``abcd history forget`` is the remedy;
- ``dry_run`` reads and redacts but writes nothing. Nothing here awaits.
Per rule, the counts of newly masked findings are returned, never the bytes.
"""

from __future__ import annotations

import dataclasses
import os

import msgspec
from collections import Counter
from collections.abc import Callable

from ..errors import AbcdError
from ..fsio.atomic import atomic_write
from ..fsio.locks import file_lock
from ..scanner.rules import HOME_KINDS
from .capture import frame, unframe
from .lane import Lane
from .meta import CaptureMeta
from .record import Record, format_record
from .records import list_records, read_body, resolve


@dataclasses.dataclass
class RescanReport:
    """What one rescan did to one lane (or, summed, to several)."""

    checked: int = 0
    current: int = 0
    rewritten: int = 0
    relabelled: int = 0
    refused: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (record, reason)
    newly_masked: Counter = dataclasses.field(default_factory=Counter)  # rule -> count

    def add(self, other: "RescanReport") -> None:
        for f in ("checked", "current", "rewritten", "relabelled"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        self.refused += other.refused
        self.newly_masked.update(other.newly_masked)


def stale(records: list[Record], label: str) -> list[Record]:
    """The records an older (or unknown) scanner redacted."""
    return [r for r in records if r.scanner != label]


def stale_survey(home) -> tuple[str, int]:
    """``(current scanner label, stored records of every lane an older one redacted)``
    — for ``status.json``, ``abcd daemon status`` and the session-start notice. The
    daemon asks after every pass, so a lane is re-read only when its ``records/``
    directory changed (a capture, a rescan rewrite, a removal renames in it): one stat
    per lane otherwise."""
    from ..scanner.build import current_label
    from .lane import list_lanes

    label = current_label()
    if not label:
        return "", 0
    total = 0
    for lane in list_lanes(home):
        try:
            stamp = os.stat(lane.records).st_mtime_ns
        except OSError:
            continue
        key = str(lane.records)
        hit = _STALE_CACHE.get(key)
        if hit is None or hit[:2] != (stamp, label):
            hit = (stamp, label, len(stale(list_records(lane), label)))
            _STALE_CACHE[key] = hit
        total += hit[2]
    return label, total


#: records dir -> (its mtime_ns, scanner label, stale count): stale_survey's memory.
_STALE_CACHE: dict[str, tuple[int, str, int]] = {}


def rescan_lane(lane: Lane, *, scanner, lock_timeout_s: float, dry_run: bool = False,
                deadline_for: Callable[[int], float] | None = None,
                progress: Callable[[Record], None] | None = None) -> RescanReport:
    """Re-redact every stale record of ``lane`` (see the module contract)."""
    from ..scanner import redact_text

    report = RescanReport()
    if not lane.exists():
        return report
    with file_lock(lane.lock_file, lock_timeout_s):
        for record in list_records(lane):
            report.checked += 1
            if record.scanner == scanner.label:
                report.current += 1
                continue
            if progress is not None:
                progress(record)
            try:
                body = read_body(lane, record)
                text = frame(_meta_of(record), body)
                redaction = redact_text(scanner, text, deadline=deadline_for(len(text)) if deadline_for else None)
                scalars, new_body = unframe(redaction.text)
            except AbcdError as exc:
                report.refused.append((record.name, str(exc)))
                continue
            if not new_body.endswith(b"\n"):
                new_body += b"\n"
            changed = new_body != body or any(getattr(record, k) != v for k, v in scalars.items())
            if changed:
                report.rewritten += 1
                report.newly_masked.update(rule for rule, _, _ in redaction.findings)
            else:
                report.relabelled += 1
            if dry_run:
                continue
            homes = sum(1 for _, kind, _ in redaction.findings if kind in HOME_KINDS)
            updated = msgspec.structs.replace(
                record, scanner=scanner.label,
                redacted_secrets=record.redacted_secrets + len(redaction.findings) - homes,
                redacted_home_paths=record.redacted_home_paths + homes,
                **scalars,
            )
            atomic_write(lane.records / record.name, format_record(updated, new_body))
    return report


def _meta_of(record: Record) -> CaptureMeta:
    """The lineage a record was framed with at capture (its stored scalars)."""
    from .meta import FRAMED_SCALARS

    return CaptureMeta(session_id=record.session_id, spawn_depth=record.spawn_depth,
                       **{name: getattr(record, name) for name in FRAMED_SCALARS})


def forget(lane: Lane, key: str, *, lock_timeout_s: float) -> Record:
    """Remove the record ``key`` resolves to (filename, agent id, session id) for
    good. Returns it. Raises what :func:`~.records.resolve` raises."""
    with file_lock(lane.lock_file, lock_timeout_s):
        record = resolve(lane, key)
        try:
            os.unlink(lane.records / record.name)
        except FileNotFoundError:
            pass
        dir_fd = os.open(lane.records, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return record
