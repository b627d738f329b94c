"""Capture: the only path that writes a record (DESIGN §3.4, reference §2).

Order, and why:
1. validate the metadata (a bad id or a forged frontmatter line is refused up front);
2. take the lane lock for the whole capture (so idempotency and supersession see a
   stable set of records);
3. idempotency on (source_sha256, session_id, agent_id, source_kind): a hit returns the
   stored record and writes nothing;
4. refuse a degraded scanner;
5. frame the lineage scalars with the body, so frontmatter is redacted by the same two-
   stage pass as the transcript (seed 003: "The frontmatter is redacted with the body");
6. sanitise, fold the caller's home, verify (the scanner's ``redact_text``): any blocking
   residual refuses the write — a :class:`~abcd_daemon.errors.PermanentError`;
7. unframe (the frame must survive, else refuse);
8. supersession by byte prefix within (session, agent, kind): an existing record that
   starts with the new body makes this a no-op; one the new body starts with is
   superseded; divergent bodies are both kept;
9. write atomically at 0o600, then retire the superseded records.
Nothing here awaits: the daemon runs ``capture`` in a worker thread, and a kill at any
instant leaves the old records, or the new one beside them (retired next time).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from typing import Callable

import msgspec

from ..config import Config
from ..errors import AbcdError, FrameLost, InputError, RetryableError
from ..fsio.atomic import atomic_write
from ..fsio.locks import file_lock
from ..paths import RECORDS
from .lane import Lane
from .meta import FRAMED_SCALARS, CaptureMeta
from .record import Record, format_record, format_rfc3339_ns, record_filename
from .records import list_records, read_body

FRAME_END = b"abcd-history-lineage-frame-end"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


class CaptureResult(msgspec.Struct, kw_only=True):
    """``wrote`` is False when an identical or longer record was already stored."""

    record: Record
    wrote: bool
    superseded: list[str] = []


class RetireError(AbcdError):
    """The record was stored but a record it superseded could not be removed."""


def frame(meta: CaptureMeta, raw: bytes) -> bytes:
    """The lineage scalars, one per line, the frame-end line, then the transcript."""
    lines = [getattr(meta, name).encode("utf-8") for name in FRAMED_SCALARS]
    return b"\n".join(lines) + b"\n" + FRAME_END + b"\n" + raw


def unframe(text: bytes) -> tuple[dict[str, str], bytes]:
    """Split redacted framed text back into (scalars, body). Raises :class:`FrameLost`."""
    parts = text.split(b"\n", len(FRAMED_SCALARS) + 1)
    if len(parts) < len(FRAMED_SCALARS) + 1 or parts[len(FRAMED_SCALARS)] != FRAME_END:
        raise FrameLost("the lineage frame did not survive redaction; refusing to write")
    scalars = {
        name: parts[i].decode("utf-8", errors="replace") for i, name in enumerate(FRAMED_SCALARS)
    }
    body = parts[len(FRAMED_SCALARS) + 1] if len(parts) > len(FRAMED_SCALARS) + 1 else b""
    return scalars, body


def _same_unit(record: Record, meta: CaptureMeta) -> bool:
    return (record.session_id, record.agent_id, record.source_kind) == (
        meta.session_id,
        meta.agent_id,
        meta.source_kind,
    )


def capture(
    lane: Lane,
    raw: bytes,
    meta: CaptureMeta,
    *,
    scanner,
    config: Config,
    now_ns: int,
    clock: Callable[[], float] = time.monotonic,
) -> CaptureResult:
    """Redact ``raw`` and store it as one record of ``lane``.

    Returns a :class:`CaptureResult`. Raises :class:`InputError` (bad metadata, empty
    transcript), :class:`~abcd_daemon.errors.DegradedScanner`,
    :class:`~abcd_daemon.errors.ScanDeadline`, :class:`~abcd_daemon.errors.LockContention`
    (retryable), :class:`~abcd_daemon.errors.RedactionResidual` or :class:`FrameLost`
    (permanent). On any error nothing is written.
    """
    from ..scanner import redact_text

    meta.validate()
    if not raw:
        raise InputError("refusing to capture an empty transcript")
    lane.ensure(RECORDS)
    with file_lock(lane.lock_file, config.lane_lock_timeout_s):
        source_sha = hashlib.sha256(raw).hexdigest()
        existing = list_records(lane)
        for record in existing:
            if record.source_sha256 == source_sha and _same_unit(record, meta):
                return CaptureResult(record=record, wrote=False)
        text = frame(meta, raw)
        redaction = redact_text(
            scanner, text, deadline=clock() + config.scan_deadline(len(text)), clock=clock
        )
        scalars, body = unframe(redaction.text)
        if not body.endswith(b"\n"):
            body += b"\n"
        superseded: list[Record] = []
        for record in existing:
            if not _same_unit(record, meta):
                continue
            try:
                old = read_body(lane, record)
            except (AbcdError, OSError):
                continue
            if old.startswith(body):
                return CaptureResult(record=record, wrote=False)
            if body.startswith(old):
                superseded.append(record)
        record = Record(
            session_id=meta.session_id,
            root_commit=lane.root_sha,
            source_sha256=source_sha,
            captured_at=format_rfc3339_ns(now_ns),
            source_kind=meta.source_kind,
            source_tool=meta.source_tool,
            redacted_secrets=redaction.secrets,
            redacted_home_paths=redaction.home_paths,
            scanner=scanner.label,
            spawn_depth=meta.spawn_depth,
            **scalars,
        )
        name = _free_name(lane, record, now_ns)
        data = format_record(record, body)
        try:
            atomic_write(lane.records / name, data)
        except OSError as exc:
            raise RetryableError(
                f"could not write the record {name} ({exc.strerror or exc})",
                hint="nothing was stored; the transcript stays staged and is retried",
            ) from exc
        record.name = name
        record.body_bytes = len(body)
        retired = _retire(lane, superseded, name)
    return CaptureResult(record=record, wrote=True, superseded=retired)


def _free_name(lane: Lane, record: Record, now_ns: int) -> str:
    """The record's filename, made filesystem-safe (a redacted id may carry ``*``) and
    unique (two captures in one nanosecond get distinct stamps)."""
    ns = now_ns
    while True:
        record.captured_at = format_rfc3339_ns(ns)
        name = _UNSAFE_NAME.sub("_", record_filename(record))
        if not os.path.lexists(lane.records / name):
            return name
        ns += 1


def _retire(lane: Lane, superseded: list[Record], stored: str) -> list[str]:
    retired = []
    for old in sorted(superseded, key=lambda r: (r.captured_ns, r.name), reverse=True):
        try:
            os.unlink(lane.records / old.name)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise RetireError(
                f"stored {stored} but could not retire the record it superseded "
                f"({old.name}: {exc.strerror})",
                hint="remove the older record by hand; both are redacted",
            ) from None
        retired.append(old.name)
    return retired
