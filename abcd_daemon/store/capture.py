"""Capture: the only path that writes a record (DESIGN §3.4, reference §2).

Streaming: a transcript of any size is captured in memory bounded by its longest
line plus ``config.capture_chunk_bytes`` (issue 16). :func:`capture_file` reads a
file (a staged copy, or the longer source the drain found); :func:`capture` takes
bytes and runs the same code over them.

Order, and why:
1. validate the metadata (a bad id or a forged frontmatter line is refused up front)
   and the size against ``max_transcript_bytes``;
2. take the lane lock for the whole capture (so idempotency and supersession see a
   stable set of records);
3. idempotency on (source_sha256, session_id, agent_id, source_kind): when the lane
   holds a record of the same unit, the source is hashed in a first, cheap pass (no
   redaction; with none, nothing can hit and pass two's hash is the source's); a hit
   returns the stored record and
   writes nothing — unless this capture carries a hook's lineage and that record's
   was read from the files (:mod:`.lineage`: the payload's lineage outranks the
   file's, whichever arrived first). A capture from the files keeps the lineage of
   a hook-lineage record of the same unit (:func:`~.lineage.prefer_hook`);
4. redact chunk by chunk (``stream``): the lineage scalars are framed with the first
   chunk, so frontmatter is redacted by the same two-stage pass as the transcript
   (seed 003); every chunk is sanitised, folded and verified by the scanner's
   ``redact_text`` — a blocking residual anywhere refuses the whole write
   (:class:`~abcd_daemon.errors.PermanentError`), a line over ``max_line_bytes``
   refuses it too (:class:`~.chunks.OverCap`, retryable: the cap is a setting). The
   redacted body goes to an owner-only temp file in ``records/``; the source is
   hashed again while it is read, and a different hash (the file changed) refuses;
5. supersession by byte prefix within (session, agent, kind), compared block by
   block from the files: an existing record whose body starts with the new body
   makes this a no-op (a hook's capture covered by a record of the file's lineage
   relabels that record instead: its body, the hook's redacted scalars); one the new
   body starts with is superseded; divergent bodies are both kept;
6. the frontmatter, now that the counts are known, is written with the body through
   one temp file and the same atomic rename (``atomic_assemble``), then the
   superseded records are retired.
Nothing here awaits: the daemon runs ``capture`` in a worker thread. A kill at any
instant leaves the old records, or the new one beside them (retired next time), plus
at worst ``.abcd-tmp-*`` files that no reader lists and the daemon sweeps at start.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import time
from typing import Callable

import msgspec

from ..config import Config
from ..errors import AbcdError, FrameLost, InputError, RetryableError
from ..fsio.atomic import atomic_assemble, temp_file
from ..fsio.guarded import open_guarded
from ..fsio.locks import file_lock
from ..paths import RECORDS
from .lane import Lane
from .meta import FRAMED_SCALARS, CaptureMeta
from .record import Record, format_record, format_rfc3339_ns, record_filename
from .chunks import hash_prefix, iter_chunks, same_prefix, too_big
from .lineage import hook_record, prefer_hook, upgrades
from .records import list_records, open_body
from .stream import Redacted, redact_to_file

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
    """Redact ``raw`` and store it as one record of ``lane`` (:func:`capture_stream`
    over the bytes). Returns a :class:`CaptureResult`; raises as :func:`capture_stream`."""
    meta.validate()
    if not raw:
        raise InputError("refusing to capture an empty transcript")
    return capture_stream(lane, io.BytesIO(raw), len(raw), meta, scanner=scanner,
                          config=config, now_ns=now_ns, clock=clock, what="transcript")


def capture_file(
    lane: Lane,
    path,
    meta: CaptureMeta,
    *,
    scanner,
    config: Config,
    now_ns: int,
    clock: Callable[[], float] = time.monotonic,
    length: int | None = None,
    what: str = "staged transcript",
    owner: int | None = None,
) -> CaptureResult:
    """Capture the file at ``path`` (guarded: a regular file, no symlinked leaf, of
    ``owner`` when given) — its first ``length`` bytes when given (a source that is
    still growing), else all of it. Raises ReadRefused for a file that cannot be
    opened, and as :func:`capture_stream`."""
    meta.validate()
    fd, size = open_guarded(path, config.max_transcript_bytes if length is None else 1 << 62,
                            what=what, allow_empty=False, owner=owner)
    with os.fdopen(fd, "rb", buffering=1 << 20) as src:
        if length is not None:
            if size < length:
                raise RetryableError(f"{what} is shorter than when it was compared; not captured",
                                     hint="it is retried on the next pass")
            size = length
        return capture_stream(lane, src, size, meta, scanner=scanner, config=config,
                              now_ns=now_ns, clock=clock, what=what)


def capture_stream(
    lane: Lane,
    src,
    size: int,
    meta: CaptureMeta,
    *,
    scanner,
    config: Config,
    now_ns: int,
    clock: Callable[[], float] = time.monotonic,
    what: str = "transcript",
) -> CaptureResult:
    """Redact the first ``size`` bytes of ``src`` (a seekable binary file object at
    offset 0) and store them as one record of ``lane``.

    Returns a :class:`CaptureResult`. Raises :class:`InputError` (bad metadata, empty
    transcript), :class:`~.chunks.OverCap` (a cap; retryable),
    :class:`~abcd_daemon.errors.DegradedScanner`,
    :class:`~abcd_daemon.errors.ScanDeadline`, :class:`~abcd_daemon.errors.LockContention`
    or :class:`RetryableError` (the source changed while read; all retryable),
    :class:`~abcd_daemon.errors.RedactionResidual` or :class:`FrameLost`
    (permanent). On any error nothing is written."""
    meta.validate()
    if size <= 0:
        raise InputError("refusing to capture an empty transcript")
    if size > config.max_transcript_bytes:
        raise too_big(what, size, config.max_transcript_bytes)
    lane.ensure(RECORDS)
    with file_lock(lane.lock_file, config.lane_lock_timeout_s):
        existing = list_records(lane)
        source_sha = None
        if any(_same_unit(r, meta) for r in existing):  # only then can step 3 hit
            hasher = hashlib.sha256()
            src.seek(0)
            hash_prefix(src, size, hasher, what=what)
            source_sha = hasher.hexdigest()
            for record in existing:
                if (record.source_sha256 == source_sha and _same_unit(record, meta)
                        and not upgrades(meta, record)):
                    return CaptureResult(record=record, wrote=False)
        meta = prefer_hook(meta, hook_record(existing, meta))
        fd, body_path = temp_file(lane.records)
        try:
            try:
                redacted, source_sha = _redact_body(src, size, meta, fd, scanner=scanner,
                                                    config=config, clock=clock, what=what,
                                                    expect_sha=source_sha)
            finally:
                os.close(fd)
            result = _store(lane, meta, body_path, redacted, existing, source_sha,
                            scanner=scanner, now_ns=now_ns)
        finally:
            try:
                os.unlink(body_path)
            except OSError:
                pass
    return result


def _redact_body(src, size: int, meta: CaptureMeta, fd: int, *, scanner, config: Config,
                 clock, what: str, expect_sha: str | None) -> tuple[Redacted, str]:
    """Pass two: redact the source into ``fd``, hashing it as it is read. Returns the
    counts and the source's sha256; raises RetryableError when ``expect_sha`` (pass
    one's hash, when there was one) differs."""
    again = hashlib.sha256()
    src.seek(0)
    chunks = iter_chunks(src, size, line_cap=config.max_line_bytes,
                         chunk_bytes=config.capture_chunk_bytes, what=what, hasher=again)
    head = frame(meta, b"")
    deadline = clock() + config.scan_deadline(size + len(head))
    try:
        redacted = redact_to_file(scanner, head, chunks, fd, unframe=unframe,
                                  deadline=deadline, clock=clock)
    except OSError as exc:
        raise RetryableError(f"could not write the redacted body ({exc.strerror or exc})",
                             hint="nothing was stored; the transcript stays staged and is retried") from exc
    if expect_sha is not None and again.hexdigest() != expect_sha:
        raise RetryableError(f"{what} changed while it was captured; nothing was stored",
                             hint="it is retried on the next pass")
    return redacted, again.hexdigest()


def _store(lane: Lane, meta: CaptureMeta, body_path: str, redacted: Redacted,
           existing: list[Record], source_sha: str, *, scanner, now_ns: int) -> CaptureResult:
    """Supersession against the stored bodies, then the atomic write (steps 5-6)."""
    new_len = redacted.body_bytes
    superseded: list[Record] = []
    relabel: Record | None = None  # a covering record of the file's lineage
    for record in existing:
        if not _same_unit(record, meta):
            continue
        relation = _prefix_relation(lane, record, body_path, new_len)
        if relation == "covers":
            if not upgrades(meta, record):
                return CaptureResult(record=record, wrote=False)
            if relabel is None or (record.captured_ns, record.name) > (relabel.captured_ns, relabel.name):
                relabel = record
        if relation == "extends":
            superseded.append(record)
    record = Record(
        session_id=meta.session_id,
        root_commit=lane.root_sha,
        source_sha256=source_sha,
        captured_at=format_rfc3339_ns(now_ns),
        source_kind=meta.source_kind,
        source_tool=meta.source_tool,
        redacted_secrets=redacted.secrets,
        redacted_home_paths=redacted.home_paths,
        scanner=scanner.label,
        spawn_depth=meta.spawn_depth,
        **redacted.scalars,
    )
    body_src, body_offset = body_path, 0
    if relabel is not None:  # its (longer or equal) body, under the hook's lineage
        body_src, body_offset, new_len = _body_span(lane, relabel)
        record = msgspec.structs.replace(
            record, source_sha256=relabel.source_sha256, redacted_secrets=relabel.redacted_secrets,
            redacted_home_paths=relabel.redacted_home_paths, scanner=relabel.scanner)
        superseded = [r for r in superseded if r.name != relabel.name] + [relabel]
    name = _free_name(lane, record, now_ns)
    head = format_record(record, b"\n")[:-1]  # the frontmatter and its closing fence
    try:
        atomic_assemble(lane.records / name, head, body_src, new_len, body_offset=body_offset)
    except OSError as exc:
        raise RetryableError(
            f"could not write the record {name} ({exc.strerror or exc})",
            hint="nothing was stored; the transcript stays staged and is retried",
        ) from exc
    record.name = name
    record.body_bytes = new_len
    retired = _retire(lane, superseded, name)
    return CaptureResult(record=record, wrote=True, superseded=retired)


def _body_span(lane: Lane, record: Record) -> tuple[str, int, int]:
    """(path, offset, length) of ``record``'s body inside its file. Raises
    RetryableError when it cannot be read (nothing is written then)."""
    try:
        f, length = open_body(lane, record)
    except (AbcdError, OSError) as exc:
        raise RetryableError(f"could not read the record {record.name} to relabel it ({exc})",
                             hint="nothing was stored; the transcript stays staged and is retried") from exc
    with f:
        return str(lane.records / record.name), f.tell(), length


def _prefix_relation(lane: Lane, record: Record, body_path: str, new_len: int) -> str:
    """``covers`` (the stored body starts with the new one), ``extends`` (the new body
    starts with the stored one), else ``diverges`` — read block by block from both
    files, never loading either. An unreadable record diverges."""
    try:
        old, old_len = open_body(lane, record)
    except (AbcdError, OSError):
        return "diverges"
    try:
        with old, open(body_path, "rb", buffering=1 << 20) as new:
            if old_len >= new_len:
                return "covers" if same_prefix(old, new, new_len) else "diverges"
            return "extends" if same_prefix(old, new, old_len) else "diverges"
    except OSError:
        return "diverges"


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
