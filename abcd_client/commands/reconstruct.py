"""``abcd history reconstruct <session-id>``: one session → one artefact + telemetry.

Behaviour (reference §6.6, seed 000):
- ``--out DIR`` (default ``.``) must be an EXISTING directory — it is never created.
  Both files are written atomically and owner-only (:mod:`abcd_client.exports`), the
  artefact first, together or not at all: if the telemetry cannot be written the
  artefact just written is removed. A file git would let ``git add`` pick up (inside a
  work tree, not ignored) is named on stderr with how to ignore it.
- ``--out -`` writes no file: the artefact goes to stdout through the terminal-safety
  filter (it is stored transcript text), followed by the telemetry in a fenced JSON
  block so a reader piping to a file still gets both.
- ``--json`` prints one envelope: the Reconstruction (names, size, telemetry) plus
  either ``written`` (home-folded paths) or ``artefact`` (the document), never both.
- ``--mode full|spine``; ``--max-block-bytes`` (default 8192, 0 disables, negative is
  refused).
The daemon answers when it runs; otherwise the same core runs in-process. Refusals are
input errors (exit 2); an unknown session or a failed write exits 1.
"""

from __future__ import annotations

import os
import sys

import typer

from abcd_daemon.errors import AbcdError, InputError

#: The per-block cap at the front door (8 KiB); 0 disables it.
DEFAULT_MAX_BLOCK_BYTES = 8 << 10
#: How many tool names the human summary lists before "and N more".
_TOP_TOOLS = 6


def _write_both(out_dir: str, reconstruction) -> list[str]:
    """Write artefact then telemetry into ``out_dir``; both or neither. Returns the
    absolute paths written. Raises AbcdError."""
    from abcd_client.exports import EXPORT_MODE
    from abcd_daemon.fsio import atomic_write

    artefact = os.path.abspath(os.path.join(out_dir, reconstruction.artefact_name))
    telemetry = os.path.abspath(os.path.join(out_dir, reconstruction.telemetry_name))
    try:
        atomic_write(artefact, reconstruction.artefact, mode=EXPORT_MODE)
    except OSError as exc:
        raise AbcdError(f"could not write {artefact}: {exc.strerror or exc}") from None
    try:
        atomic_write(telemetry, reconstruction.telemetry_json(), mode=EXPORT_MODE)
    except (OSError, AbcdError) as exc:
        try:
            os.unlink(artefact)
        except OSError:
            pass
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise AbcdError(f"could not write {telemetry}: {detail}; the artefact written "
                        "beside it was removed, so neither file is there") from None
    return [artefact, telemetry]


def _stdout_text(reconstruction) -> str:
    from abcd_daemon.reconstruct.fence import fence
    from abcd_daemon.termsafe import sanitize_block

    artefact = reconstruction.artefact.decode("utf-8", "replace")
    telemetry = reconstruction.telemetry_json().decode("utf-8")
    return (sanitize_block(artefact) + f"\n<!-- {reconstruction.telemetry_name} -->\n\n"
            + sanitize_block(fence(telemetry.rstrip("\n"), "json")))


def _summary(reconstruction, written: list[str]) -> None:
    from abcd_client.output import human_bytes, say
    from abcd_daemon.reconstruct.labels import duration

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


def _reconstruct(opts):
    """Ask the daemon; when none answers, run the same core in-process."""
    import msgspec

    from abcd_client import runtime
    from abcd_client.connect import ask
    from abcd_daemon.reconstruct import Reconstruction, Telemetry, reconstruct
    from abcd_daemon.wire.messages import ReconstructRequest

    _, lane = runtime.checkout()
    answered = ask(ReconstructRequest(root_sha=lane.root_sha, session_id=opts.session_id,
                                      mode=opts.mode, max_block_bytes=opts.max_block_bytes),
                   stream=True)
    if answered is None:
        return reconstruct(lane, opts, now_ns=runtime.now_ns())
    head, artefact = answered
    return Reconstruction(artefact=artefact, artefact_name=head.artefact_name,
                          telemetry_name=head.telemetry_name,
                          artefact_bytes=head.artefact_bytes,
                          telemetry=msgspec.json.decode(head.telemetry_json, type=Telemetry))


def run(session_id: str, out: str, mode: str, max_block_bytes: int, as_json: bool) -> None:
    """The verb's body (exits through :func:`abcd_client.output.fail` on a refusal)."""
    from abcd_client.exports import warn_if_committable
    from abcd_client.output import emit_json, fail
    from abcd_daemon.reconstruct import ReconstructOptions

    try:
        opts = ReconstructOptions(session_id=session_id, mode=mode,
                                  max_block_bytes=max_block_bytes)
        if out != "-" and not os.path.isdir(out):
            raise InputError(f"history reconstruct: --out {out} is not an existing directory",
                             hint="create it first (reconstruct never creates one), or "
                             "give --out - to print to stdout")
        result = _reconstruct(opts)
        written = _write_both(out, result) if out != "-" else []
    except AbcdError as err:
        fail(err, as_json=as_json)
    warn_if_committable(written)
    if as_json:
        envelope = result.envelope()
        if out == "-":
            envelope["artefact"] = result.artefact.decode("utf-8", "replace")
        else:
            envelope["written"] = written
        emit_json(envelope)
    elif out == "-":
        sys.stdout.write(_stdout_text(result))
        sys.stdout.flush()
    else:
        _summary(result, written)


def register(app: typer.Typer, history: typer.Typer, daemon: typer.Typer) -> None:
    @history.command("reconstruct")
    def reconstruct_command(
        session_id: str = typer.Argument(..., metavar="SESSION-ID",
                                         help="The session to reconstruct."),
        out: str = typer.Option(".", "--out", metavar="DIR|-",
                                help="An existing directory to write <session>.md and "
                                "<session>.telemetry.json into (never created); - prints "
                                "both to stdout. Prefer .abcd/.work.local/scratch/."),
        mode: str = typer.Option("full", "--mode", metavar="full|spine",
                                 help="full: every turn. spine: the main thread whole, "
                                 "each sub-agent reduced to its first and last turn."),
        max_block_bytes: int = typer.Option(
            DEFAULT_MAX_BLOCK_BYTES, "--max-block-bytes", metavar="N",
            help="Cap one rendered tool input, tool result or thinking block at N bytes "
            "(marked and counted); 0 disables the cap."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Render one captured session — its main thread and every sub-agent — as one
        self-contained Markdown artefact plus a telemetry file. Reads the store of the
        current checkout and writes nothing but the two files; refuses outside a git
        checkout."""
        run(session_id, out, mode, max_block_bytes, as_json)
