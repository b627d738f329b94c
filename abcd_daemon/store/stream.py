"""Streaming redaction: framed chunks of whole lines in, a redacted body file out.

Contract of :func:`redact_to_file`:
- The lineage frame (``capture.frame``'s lines) is redacted together with the first
  chunk, by the same two-stage pass as the body, and split back off it; every chunk
  goes through the scanner's public ``redact_text`` — sanitise, then the fail-closed
  verify — exactly as a whole text would. The scanner is line-local (its contract,
  tested there), and ``chunks`` cuts only where no PEM block can span the cut, so
  redacting chunk by chunk finds, masks and refuses what one pass over the whole
  would.
- One ``deadline`` (absolute, from the whole transcript's size) covers every chunk.
- Any refusal (residual, lost frame, deadline, degraded scanner, a cap, a short
  read) raises before :func:`redact_to_file` returns; the caller removes the body
  file. A residual's line numbers and positions are rebased onto the whole framed
  text, so the reason points where a user can look.
- Memory: one chunk, its redacted copy and the scanner's working set; never the file.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Iterable

from ..errors import FrameLost, RedactionResidual


@dataclasses.dataclass
class Redacted:
    """What :func:`redact_to_file` wrote: the frame's scalars, the counts, the body size."""

    scalars: dict[str, str]
    secrets: int = 0
    home_paths: int = 0
    kinds: Counter = dataclasses.field(default_factory=Counter)
    body_bytes: int = 0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _rebased(exc: RedactionResidual, line_offset: int, byte_offset: int) -> RedactionResidual:
    if not line_offset and not byte_offset:
        return exc
    return RedactionResidual(
        list(exc.kinds),
        [(s + byte_offset, e + byte_offset) for s, e in exc.positions],
        lines=[n + line_offset for n in exc.lines], rules=list(exc.rules))


def redact_to_file(
    scanner,
    frame_head: bytes,
    chunks: Iterable[bytes],
    out_fd: int,
    *,
    unframe: Callable[[bytes], tuple[dict[str, str], bytes]],
    deadline: float | None,
    clock: Callable[[], float],
) -> Redacted:
    """Redact ``frame_head`` + ``chunks`` and write the redacted body to ``out_fd``.

    ``frame_head`` is the frame (scalar lines and the frame-end line) prepended to the
    first chunk; ``unframe`` splits the redacted first chunk into (scalars, body) and
    raises :class:`FrameLost`. An empty ``chunks`` still redacts the frame. The body
    written always ends with a newline (one is added to a last line without one).
    Raises what ``redact_text`` raises, and :class:`FrameLost`."""
    from ..scanner import redact_text

    out: Redacted | None = None
    line_offset = byte_offset = 0
    last = b"\n"
    carried: dict = {}  # secret values found so far, masked in every later batch
    for chunk in _with_frame(frame_head, chunks):
        try:
            red = redact_text(scanner, chunk, deadline=deadline, clock=clock, carried=carried)
        except RedactionResidual as exc:
            raise _rebased(exc, line_offset, byte_offset) from None
        text = red.text
        if out is None:
            scalars, text = unframe(text)
            out = Redacted(scalars=scalars)
        out.secrets += red.secrets
        out.home_paths += red.home_paths
        out.kinds.update(red.kinds)
        if text:
            _write_all(out_fd, text)
            out.body_bytes += len(text)
            last = text[-1:]
        line_offset += chunk.count(b"\n")
        byte_offset += len(chunk)
    if out is None:  # pragma: no cover - _with_frame always yields
        raise FrameLost("the lineage frame did not survive redaction; refusing to write")
    if last != b"\n":
        _write_all(out_fd, b"\n")
        out.body_bytes += 1
    return out


def _with_frame(frame_head: bytes, chunks: Iterable[bytes]):
    it = iter(chunks)
    first = next(it, b"")
    yield frame_head + first
    yield from it


@dataclasses.dataclass
class PlainRedacted:
    """What :func:`redact_plain` wrote: counts, findings with whole-text line numbers,
    and the input's size in bytes and lines."""

    secrets: int = 0
    home_paths: int = 0
    findings: list = dataclasses.field(default_factory=list)
    bytes_in: int = 0
    lines_in: int = 0
    ends_with_newline: bool = True


def redact_plain(scanner, chunks: Iterable[bytes], out_fd: int, *, deadline: float | None,
                 clock: Callable[[], float]) -> PlainRedacted:
    """Redact ``chunks`` (whole lines, :func:`~.chunks.iter_chunks`) one by one and
    write the redacted text to ``out_fd`` as it is (``abcd redact``: no frame, no
    newline added). Findings and a residual's position are rebased onto the whole
    text. Raises what ``redact_text`` raises; the caller discards what was written."""
    from ..scanner import redact_text

    out = PlainRedacted()
    line_offset = byte_offset = 0
    last = b""
    carried: dict = {}  # as redact_to_file: a value found is masked in every later batch
    for chunk in chunks:
        try:
            red = redact_text(scanner, chunk, deadline=deadline, clock=clock, carried=carried)
        except RedactionResidual as exc:
            raise _rebased(exc, line_offset, byte_offset) from None
        out.secrets += red.secrets
        out.home_paths += red.home_paths
        out.findings += [(rule, kind, line + line_offset) for rule, kind, line in red.findings]
        _write_all(out_fd, red.text)
        del red
        line_offset += chunk.count(b"\n")
        byte_offset += len(chunk)
        last = chunk[-1:]
    out.bytes_in, out.ends_with_newline = byte_offset, last in (b"\n", b"")
    out.lines_in = line_offset + (0 if out.ends_with_newline else 1)
    return out
