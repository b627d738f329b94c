"""``abcd history reconstruct``: sessions → Markdown artefacts + telemetry files.

One session (``abcd history reconstruct ID``; reference §6.6, seed 000):
- ``--out DIR`` (default ``.``) must be an EXISTING directory — it is never created.
  Both files are written atomically and owner-only, together or not at all
  (:mod:`abcd_client.reconstruct_files`). A file git would let ``git add`` pick up is
  named on stderr with how to ignore it.
- ``--out -`` writes no file: the artefact goes to stdout through the terminal-safety
  filter, followed by the telemetry in a fenced JSON block (held in an anonymous temp
  file meanwhile, never in memory, unless ``--json`` puts it in the envelope).
- ``--json`` prints one envelope: the Reconstruction (names, size, telemetry) plus
  either ``written`` (home-folded paths) or ``artefact`` (the document), never both.

Many sessions (several ids, ``--all`` for this repository, ``--all-repos`` for every
one, narrowed by ``--since``): one request, one pair per session into ``--out``
(:mod:`abcd_client.reconstruct_batch`); ``--out -`` is refused there.

``--format html`` writes the same session page ``abcd view`` serves as one
self-contained ``<session>.html`` instead of the pair (no script, no request, the
stylesheet inline; :func:`abcd_client.reconstruct_files.html_export`); ``--out -``
prints it.

An id may be a unique prefix of 6+ characters. ``--mode full|spine``;
``--max-block-bytes`` (default 8192, 0 disables, negative is refused). The daemon
answers when it runs; otherwise the same core runs in-process. Exit status: 0 done,
1 a session unknown or failed (any of a batch), 2 bad input.

:func:`reconstruct_sessions` is the verb's body, called by the typer command and by the
typer-free fast path (:mod:`abcd_client.quick`, one session) alike; this module imports
typer only to register the command.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional  # the typer command's annotations are read from here

from abcd_daemon.errors import AbcdError, InputError

#: The per-block cap at the front door (8 KiB); 0 disables it.
DEFAULT_MAX_BLOCK_BYTES = 8 << 10


def _reconstruct(session_id: str, mode: str, max_block_bytes: int, out_dir: str = "",
                 sink=None):
    """Ask the daemon; when none answers, run the same core in-process. With
    ``out_dir`` the in-process core writes the pair there itself, the artefact as it is
    rendered: returns (reconstruction, paths written) — ``None`` for paths when the
    daemon answered (the caller writes the pair). With ``sink`` (a binary file) the
    artefact, served or rendered, is written there as it comes, never held whole."""
    from abcd_client import runtime
    from abcd_client.connect import ask
    from abcd_client.reconstruct_files import served
    from abcd_daemon.wire.messages import ReconstructRequest

    lane = runtime.lane()
    request = ReconstructRequest(root_sha=lane.root_sha, session_id=session_id, mode=mode,
                                 max_block_bytes=max_block_bytes)
    if out_dir or sink is not None:  # the served artefact is written as it arrives
        from abcd_client.connect import ask_into
        from abcd_client.reconstruct_files import write_pair_streamed

        class _NoDaemon(Exception):
            pass

        def from_daemon(target, _spill):
            head = ask_into(request, target.write)
            if head is None:
                raise _NoDaemon
            return served(head, b"")

        try:
            if sink is not None:
                return from_daemon(sink, None), None
            return write_pair_streamed(out_dir, from_daemon)
        except _NoDaemon:
            pass
    else:
        answered = ask(request, stream=True)
        if answered is not None:
            return served(*answered), None
    from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
    from abcd_daemon.store.sessions import expand_session

    opts = ReconstructOptions(session_id=expand_session([lane], session_id), mode=mode,
                              max_block_bytes=max_block_bytes)
    if out_dir:
        from abcd_client.reconstruct_files import write_pair_streamed

        return write_pair_streamed(out_dir, lambda target, spill: reconstruct(
            lane, opts, now_ns=runtime.now_ns(), sink=target, spill_dir=spill))
    return reconstruct(lane, opts, now_ns=runtime.now_ns(), sink=sink), None


FORMATS = ("md", "html")


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise InputError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")


def run(session_id: str, out: str, mode: str, max_block_bytes: int, as_json: bool,
        fmt: str = "md") -> None:
    """One session's verb body (exits through :func:`abcd_client.output.fail`)."""
    from abcd_client.exports import warn_if_committable
    from abcd_client.output import emit_json, fail
    from abcd_client.reconstruct_files import (html_export, print_summary, print_streamed,
                                               write_html, write_pair)
    from abcd_daemon.reconstruct.schema import ReconstructOptions
    from abcd_daemon.termsafe import sanitize_block

    try:
        _check_format(fmt)
        ReconstructOptions(session_id=session_id, mode=mode, max_block_bytes=max_block_bytes)
        _check_out(out)
        pair_here = out if fmt == "md" and out != "-" else ""
        if fmt == "md" and out == "-" and not as_json:  # printed as it is read back
            import tempfile

            with tempfile.TemporaryFile() as held:  # owner-only, already unlinked
                result, _ = _reconstruct(session_id, mode, max_block_bytes, sink=held)
                print_streamed(result, held)
            return
        result, written = _reconstruct(session_id, mode, max_block_bytes, pair_here)
        if written is None:
            writer = write_html if fmt == "html" else write_pair
            written = writer(out, result) if out != "-" else []
        page = html_export(result).decode("utf-8") if fmt == "html" and out == "-" else ""
    except AbcdError as err:
        fail(err, as_json=as_json)
    warn_if_committable(written)
    if as_json:
        envelope = result.envelope()
        if out == "-":
            envelope["artefact" if fmt == "md" else "html"] = (
                page or result.artefact.decode("utf-8", "replace"))
        else:
            envelope["written"] = written
        emit_json(envelope)
    elif out == "-":
        sys.stdout.write(sanitize_block(page))
        sys.stdout.flush()
    else:
        print_summary(result, written)


def _check_out(out: str) -> None:
    if out != "-" and not os.path.isdir(out):
        raise InputError(f"history reconstruct: --out {out} is not an existing directory",
                         hint="create it first (reconstruct never creates one), or "
                         "give --out - to print to stdout")


def run_many(ids: list[str], everything: bool, all_repos: bool, since: str, out: str,
             mode: str, max_block_bytes: int, as_json: bool, fmt: str = "md") -> None:
    """The batch: several ids, ``--all`` or ``--all-repos``."""
    from abcd_client import output, runtime
    from abcd_client.reconstruct_batch import run_batch
    from abcd_daemon.reconstruct.schema import ReconstructOptions
    from abcd_daemon.wire.messages import BatchReconstructRequest

    try:
        _check_format(fmt)
        for key in ids or ["x"]:  # each id is safe; the mode and the cap are usable
            ReconstructOptions(session_id=key, mode=mode, max_block_bytes=max_block_bytes)
        if ids and (everything or all_repos):
            raise InputError("give session ids, or --all / --all-repos, not both")
        if since and not (everything or all_repos):
            raise InputError("--since narrows --all or --all-repos; give one of them")
        if out == "-":
            raise InputError("several sessions cannot share stdout: give --out DIR",
                             hint="or reconstruct one session with --out -")
        _check_out(out)
        root_sha = "" if all_repos else runtime.lane().root_sha
    except AbcdError as err:
        output.fail(err, as_json=as_json)
    run_batch(BatchReconstructRequest(root_sha=root_sha, all_repos=all_repos, session_ids=ids,
                                      since=since, mode=mode, max_block_bytes=max_block_bytes),
              out, as_json, fmt)


def reconstruct_sessions(session_ids: Optional[List[str]] = None, *, everything: bool = False,
                         all_repos: bool = False, since: str = "", out: str = ".",
                         mode: str = "full", max_block_bytes: int = DEFAULT_MAX_BLOCK_BYTES,
                         fmt: str = "md", as_json: bool = False) -> None:
    """``abcd history reconstruct``: one session (:func:`run`), or a batch — several
    ids, ``everything`` (this repository) or ``all_repos`` (:func:`run_many`)."""
    ids = list(session_ids or [])
    if len(ids) == 1 and not (everything or all_repos or since):
        run(ids[0], out, mode, max_block_bytes, as_json, fmt)
    elif not ids and not (everything or all_repos):
        from abcd_client import output

        output.fail(InputError("name a session to reconstruct, or pass --all or --all-repos",
                               hint="`abcd history list` shows the sessions stored here"),
                    as_json=as_json)
    else:
        run_many(ids, everything, all_repos, since, out, mode, max_block_bytes, as_json, fmt)


def register(app, history, daemon) -> None:
    import typer

    @history.command("reconstruct")
    def reconstruct_command(
        session_ids: Optional[List[str]] = typer.Argument(
            None, metavar="[SESSION-ID]...",
            help="The sessions to reconstruct (a unique prefix of 6+ characters will do)."),
        everything: bool = typer.Option(False, "--all",
                                        help="Every session of this repository."),
        all_repos: bool = typer.Option(False, "--all-repos",
                                       help="Every session of every repository in the store "
                                       "(works anywhere)."),
        since: str = typer.Option("", "--since", metavar="DATE",
                                  help="With --all or --all-repos: only sessions with a record "
                                  "captured at or after DATE (YYYY-MM-DD, UTC, or RFC 3339)."),
        out: str = typer.Option(".", "--out", metavar="DIR|-",
                                help="An existing directory to write <session>.md and "
                                "<session>.telemetry.json into (never created); - prints "
                                "both to stdout (one session only). Prefer "
                                ".abcd/.work.local/scratch/."),
        mode: str = typer.Option("full", "--mode", metavar="full|spine",
                                 help="full: every turn. spine: the main thread whole, "
                                 "each sub-agent reduced to its first and last turn."),
        max_block_bytes: int = typer.Option(
            DEFAULT_MAX_BLOCK_BYTES, "--max-block-bytes", metavar="N",
            help="Cap one rendered tool input, tool result or thinking block at N bytes "
            "(marked and counted); 0 disables the cap."),
        fmt: str = typer.Option("md", "--format", metavar="md|html",
                                help="md: <session>.md + <session>.telemetry.json. html: one "
                                "self-contained <session>.html, the page `abcd view` shows "
                                "(timeline picture, per-agent bars, transcript)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Render captured sessions — each with its main thread and every sub-agent — as
        one self-contained Markdown artefact plus a telemetry file per session. One id,
        several, --all (this repository) or --all-repos, in one daemon request; a
        batch shows progress on a terminal, then a summary table, and exits 1 if any
        session failed (the rest are still written). Reads the store and writes nothing
        but those files; refuses outside a git checkout (except --all-repos)."""
        reconstruct_sessions(session_ids, everything=everything, all_repos=all_repos, since=since,
                             out=out, mode=mode, max_block_bytes=max_block_bytes, fmt=fmt,
                             as_json=as_json)
