"""Where a reconstruction goes: two owner-only files in ``--out``, or stdout.

- :func:`write_pair` writes the artefact then the telemetry into an existing directory,
  atomically and owner-only (:mod:`abcd_client.exports`), together or not at all: if
  the telemetry cannot be written the artefact just written is removed. Atomic means
  temp file + rename, so a kill at any instant leaves no partial file under either
  name; they are not fsynced — an export is derived and can be written again, and a
  batch of a whole corpus would otherwise pay two disk flushes per session.
- :func:`write_pair_streamed` is the same pair for an artefact the core writes as it
  renders it (in-process, into a temp file in ``--out``): nothing of it is held in
  memory, whatever the session's size.
- :func:`print_streamed` prints what ``--out -`` prints: the artefact through the
  terminal-safety filter (it is stored transcript text), then the telemetry in a fenced
  JSON block so a reader piping to a file still gets both; the artefact is read from
  the temp file it was written to, a block at a time.
- :func:`print_summary` is the human summary of one session.

They take any value with ``artefact``, ``artefact_name``, ``telemetry_name``,
``artefact_bytes``, ``telemetry`` and ``telemetry_json()`` — a core
:class:`~abcd_daemon.reconstruct.schema.Reconstruction`, whether the daemon or this
process made it.
"""

from __future__ import annotations

import os
import sys

from abcd_daemon.errors import AbcdError

#: How many tool names the human summary lists before "and N more".
_TOP_TOOLS = 6


def write_pair(out_dir: str, reconstruction) -> list[str]:
    """Write artefact then telemetry into ``out_dir``; both or neither. Returns the
    absolute paths written. Raises AbcdError."""
    from abcd_client.exports import EXPORT_MODE
    from abcd_daemon.fsio import atomic_write

    artefact = os.path.abspath(os.path.join(out_dir, reconstruction.artefact_name))
    telemetry = os.path.abspath(os.path.join(out_dir, reconstruction.telemetry_name))
    try:
        atomic_write(artefact, reconstruction.artefact, mode=EXPORT_MODE, durable=False)
    except OSError as exc:
        raise AbcdError(f"could not write {artefact}: {exc.strerror or exc}") from None
    _write_telemetry_beside(artefact, telemetry, reconstruction)
    return [artefact, telemetry]


def write_pair_streamed(out_dir: str, make) -> tuple[object, list[str]]:
    """:func:`write_pair` for an artefact written as it is rendered: ``make(sink,
    spill_dir)`` writes it into a temp file in ``out_dir`` and returns the
    Reconstruction; the temp file is then renamed into place and the telemetry written
    beside it, both or neither. Returns (reconstruction, paths). Raises AbcdError (and
    leaves no file) when the core or a write fails."""
    from abcd_client.exports import EXPORT_MODE
    from abcd_daemon.fsio.atomic import temp_file

    try:
        fd, tmp = temp_file(out_dir)
    except OSError as exc:
        raise AbcdError(f"could not write into {os.path.abspath(out_dir)}: "
                        f"{exc.strerror or exc}") from None
    try:
        os.fchmod(fd, EXPORT_MODE)
        with os.fdopen(fd, "wb", buffering=1 << 20) as sink:
            reconstruction = make(sink, out_dir)
        artefact = os.path.abspath(os.path.join(out_dir, reconstruction.artefact_name))
        try:
            os.replace(tmp, artefact)
        except OSError as exc:
            raise AbcdError(f"could not write {artefact}: {exc.strerror or exc}") from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    telemetry = os.path.abspath(os.path.join(out_dir, reconstruction.telemetry_name))
    _write_telemetry_beside(artefact, telemetry, reconstruction)
    return reconstruction, [artefact, telemetry]


def _write_telemetry_beside(artefact: str, telemetry: str, reconstruction) -> None:
    from abcd_client.exports import EXPORT_MODE
    from abcd_daemon.fsio import atomic_write

    try:
        atomic_write(telemetry, reconstruction.telemetry_json(), mode=EXPORT_MODE,
                     durable=False)
    except (OSError, AbcdError) as exc:
        try:
            os.unlink(artefact)
        except OSError:
            pass
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise AbcdError(f"could not write {telemetry}: {detail}; the artefact written "
                        "beside it was removed, so neither file is there") from None


def html_name(session_id: str) -> str:
    return f"{session_id}.html"


def html_export(reconstruction) -> bytes:
    """The session page (:func:`abcd_daemon.web.session_page.export_html`) as one
    self-contained HTML file: no script, no request, its stylesheet inline. Per-thread
    costs are ``abcd usage``'s (daemon-served when one runs), included when the index
    can price them."""
    from abcd_client import runtime
    from abcd_client.view_source import DaemonSource
    from abcd_daemon.web.session_page import export_html

    t = reconstruction.telemetry
    try:
        costs = DaemonSource(runtime.home(), runtime.config().pricing).thread_costs(
            t.root_commit, t.session_id)
    except AbcdError:
        costs = None
    return export_html(reconstruction, costs).encode("utf-8")


def write_html(out_dir: str, reconstruction) -> list[str]:
    """Write ``<session>.html`` (:func:`html_export`) into ``out_dir``, atomically and
    owner-only. Returns the absolute path written. Raises AbcdError."""
    from abcd_client.exports import EXPORT_MODE
    from abcd_daemon.fsio import atomic_write

    path = os.path.abspath(os.path.join(out_dir, html_name(reconstruction.telemetry.session_id)))
    try:
        atomic_write(path, html_export(reconstruction), mode=EXPORT_MODE, durable=False)
    except OSError as exc:
        raise AbcdError(f"could not write {path}: {exc.strerror or exc}") from None
    return [path]


def print_streamed(reconstruction, held) -> None:
    """Print what ``--out -`` prints: the artefact (read from the binary file ``held``,
    from its start, a block at a time — never held whole) through the terminal-safety
    filter, then the telemetry in a fenced JSON block."""
    import codecs

    from abcd_daemon.reconstruct.fence import fence
    from abcd_daemon.termsafe import sanitize_block

    held.seek(0)
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode
    write = sys.stdout.write
    for block in iter(lambda: held.read(1 << 20), b""):
        write(sanitize_block(decode(block)))
    write(sanitize_block(decode(b"", final=True)))
    telemetry = reconstruction.telemetry_json().decode("utf-8")
    write(f"\n<!-- {reconstruction.telemetry_name} -->\n\n"
          + sanitize_block(fence(telemetry.rstrip("\n"), "json")))
    sys.stdout.flush()


def print_summary(reconstruction, written: list[str]) -> None:
    from abcd_client.output import human_bytes, say
    from abcd_daemon.reconstruct.spans import duration

    t = reconstruction.telemetry
    c = t.completeness
    subs = c.agents_total - (1 if c.main_thread_present else 0)
    placed = subs - c.agents_without_spawn_point
    say(f"abcd history reconstruct — session {t.session_id} ({t.mode} mode)")
    for i, path in enumerate(written):
        say(f"  {'wrote:' if i == 0 else '':<12}{path}")
    say(f"  {'artefact:':<12}{human_bytes(reconstruction.artefact_bytes)}")
    say(f"  {'agents:':<12}{c.agents_total} ({subs} sub-agent(s); {placed} placed, "
        f"{c.agents_without_spawn_point} without a recoverable spawn point)")
    say(f"  {'turns:':<12}{t.turns.total} ({t.turns.user} user, {t.turns.assistant} assistant)")
    say(f"  {'tokens:':<12}{t.tokens.total} over {t.tokens.api_responses} API response(s)")
    say(f"  {'duration:':<12}{duration(t.wall_clock_seconds) if t.started_at else '—'}")
    tools = sorted(t.tool_calls.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{name} {n}" for name, n in tools[:_TOP_TOOLS]) or "none"
    if len(tools) > _TOP_TOOLS:
        shown += f", and {len(tools) - _TOP_TOOLS} more"
    say(f"  {'tool calls:':<12}{shown}")
    for dropped in c.dropped_records:
        say(f"NOTE: record NOT used: {dropped.record} — {dropped.reason}")
    for note in c.notes:
        say(f"NOTE: {note}")


def served(head, artefact: bytes):
    """The Reconstruction a daemon's reply head (``ReconstructReply`` or
    ``SessionReconstructed``) and its streamed artefact describe."""
    import msgspec

    from abcd_daemon.reconstruct.schema import Reconstruction, Telemetry

    return Reconstruction(artefact=artefact, artefact_name=head.artefact_name,
                          telemetry_name=head.telemetry_name,
                          artefact_bytes=head.artefact_bytes,
                          telemetry=msgspec.json.decode(head.telemetry_json, type=Telemetry))
