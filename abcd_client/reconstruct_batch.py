"""``abcd history reconstruct ID ID… | --all | --all-repos [--since DATE]``.

One request: the daemon plans the batch and streams every session back
(:mod:`abcd_daemon.server.batch`); with no daemon the same core runs here. Each
session's pair of files is written into ``--out`` as it arrives (the same writer as a
single session, :func:`~abcd_client.reconstruct_files.write_pair`), so a failure — of
one session's reconstruction or of one write — is reported for that session while
every other one is still written. With ``--format html`` each session is one
``<session>.html`` instead (:func:`~abcd_client.reconstruct_files.write_html`).

Output: a progress bar on a terminal (stderr; nothing when piped), then a summary
table (session, repository, agents, turns, tokens, size, result) and a totals line;
failures are named on stderr with their reason. ``--json`` prints one document
``{"out", "written": [...], "failed": [...]}`` instead. Exit status: 0 when every
session was written, 1 when any failed.
"""

from __future__ import annotations

import sys

import typer

from abcd_daemon.errors import AbcdError

from . import output
from .reconstruct_files import served, write_html, write_pair


def _served_items(client, request):
    """(items planned, iterator of (SessionRef, Reconstruction | AbcdError)) from the
    daemon's stream."""
    from abcd_daemon.wire import messages as m

    from .connect import remote_error

    head = client.request(request)

    def items():
        stream = client.until(m.BatchDone)
        for message in stream:
            if isinstance(message, m.SessionFailed):
                yield message.session, remote_error(message.error)
            elif isinstance(message, m.SessionReconstructed):
                parts = []
                for part in stream:
                    if isinstance(part, m.End):
                        break
                    parts.append(part.data)
                yield message.session, served(message, b"".join(parts))

    return head.total, items()


def _local_items(request):
    from abcd_daemon.reconstruct.batch import plan_batch, reconstruct_batch

    from . import runtime

    home = runtime.home()
    plan = plan_batch(home, root_sha=request.root_sha, all_repos=request.all_repos,
                      keys=list(request.session_ids), since=request.since)
    items = ((item.session, item.result if item.error is None else item.error)
             for item in reconstruct_batch(home, plan, mode=request.mode,
                                           max_block_bytes=request.max_block_bytes,
                                           now_ns=runtime.now_ns()))
    return plan.total, items


def run_batch(request, out: str, as_json: bool, fmt: str = "md") -> None:
    """Run the batch ``request`` (a BatchReconstructRequest) into the directory ``out``;
    ``fmt`` ``html`` writes one ``<session>.html`` per session instead of the pair."""
    from .connect import daemon
    from .exports import warn_if_committable
    from .progress import Bar

    written, failed, rows = [], [], []
    client = daemon()
    try:
        total, items = _served_items(client, request) if client else _local_items(request)
        bar = Bar(sys.stderr, phases=("writing",)) if sys.stderr.isatty() and not as_json else None
        done = size = 0
        try:
            for ref, result in items:
                if not isinstance(result, AbcdError):
                    try:
                        paths = (write_html if fmt == "html" else write_pair)(out, result)
                    except AbcdError as exc:
                        result = exc
                if isinstance(result, AbcdError):
                    failed.append((ref, result))
                    rows.append(_row(ref, None, f"FAILED: {result}"))
                else:
                    written.append((ref, result, paths))
                    size += result.artefact_bytes
                    rows.append(_row(ref, result, "written"))
                done += 1
                if bar is not None:
                    bar(done, total, size, 0)
        finally:
            if bar is not None:
                bar.close()
    except AbcdError as err:
        output.fail(err, as_json=as_json)
    finally:
        if client is not None:
            client.close()
    warn_if_committable([p for _, _, paths in written for p in paths])
    if as_json:
        output.emit_json({"out": out, "written": [
            dict(result.envelope(), session_id=ref.session_id, root_sha=ref.root_sha,
                 repository=ref.repository, written=paths) for ref, result, paths in written],
            "failed": [{"session_id": ref.session_id, "root_sha": ref.root_sha,
                        "repository": ref.repository, "message": str(err), "hint": err.hint}
                       for ref, err in failed]})
    else:
        _print_table(rows, out, len(written), len(failed), size)
    for ref, err in failed:
        output.note(f"abcd: session {ref.session_id}: {err}")
    if failed:
        raise typer.Exit(1)


def _row(ref, result, state: str) -> tuple:
    where = ref.repository or ref.root_sha[:12] or "-"
    if result is None:
        return (ref.session_id, where, "-", "-", "-", "-", state)
    t = result.telemetry
    return (ref.session_id, where, str(t.completeness.agents_total), str(t.turns.total),
            str(t.tokens.total), output.human_bytes(result.artefact_bytes), state)


def _print_table(rows: list[tuple], out: str, n_written: int, n_failed: int, size: int) -> None:
    if not rows:
        output.say("abcd history reconstruct — no session matched; nothing written")
        return
    headers = ("session", "repository", "agents", "turns", "tokens", "artefact", "result")
    cells = [headers] + rows
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers) - 1)]
    for r in cells:
        output.say("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths))) + "  " + r[-1])
    output.say(f"abcd history reconstruct — {n_written} session(s) written into {out} "
               f"({output.human_bytes(size)} of artefacts), {n_failed} failed")
