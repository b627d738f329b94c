"""``abcd history capture | list | show``: the corpus of the current repository.

:func:`list_records` and :func:`show` are the bodies of ``history list`` and ``history
show``, called by the typer commands and by the typer-free fast path
(:mod:`abcd_client.quick`) alike; this module imports typer only to register the
commands (and capture reads stdin through it).
"""

from __future__ import annotations

from typing import Optional  # the typer commands' annotations are read from this module

from abcd_daemon.errors import AbcdError, InputError, PermanentError

from .. import output, runtime


def _who(record) -> str:
    who = record.session_id
    if record.agent_id:
        who += f" agent {record.agent_id} ({record.agent_type or 'type unknown'})"
    return who


def _short_time(stamp: str) -> str:
    return stamp[:19] + "Z" if len(stamp) >= 19 else stamp or "-"


class _readable:
    """The path capture reads: FILE itself (guarded by capture), or stdin copied to an
    owner-only temp file in the lane's ``staging/`` (where unredacted bytes may rest),
    removed afterwards. Either way it must be a JSONL transcript, as intake requires,
    and it is never held in memory whole. Raises InputError (empty, not JSONL, over a
    cap) or ReadRefused."""

    def __init__(self, file: str, lane, cfg) -> None:
        self.file, self.lane, self.cfg, self.tmp = file, lane, cfg, ""

    def __enter__(self) -> str:
        import os

        from abcd_daemon.fsio.atomic import temp_file
        from abcd_daemon.fsio.guarded import open_guarded
        from abcd_daemon.intake.copy import head_is_jsonl
        from abcd_daemon.paths import STAGING
        from abcd_daemon.store.chunks import OverCap

        cap, line_cap = self.cfg.max_transcript_bytes, self.cfg.max_line_bytes
        if self.file == "-":
            self.lane.ensure(STAGING)
            fd, self.tmp = temp_file(self.lane.staging)
            try:
                import typer

                stdin, size = typer.get_binary_stream("stdin"), 0
                while block := stdin.read(1 << 20):
                    size += len(block)
                    if size > cap:
                        raise InputError(f"stdin is over the {cap}-byte transcript cap "
                                         "(max_transcript_bytes); refused whole")
                    view = memoryview(block)
                    while view:
                        view = view[os.write(fd, view):]
                if size == 0:
                    raise InputError("stdin was empty; nothing to capture")
            except BaseException:
                os.close(fd)
                self.__exit__()
                raise
            os.close(fd)
            path, name = self.tmp, "stdin"
        else:
            path, name = self.file, repr(self.file)
        try:
            fd, size = open_guarded(path, cap, what="transcript", allow_empty=False)
        except BaseException:
            self.__exit__()
            raise
        try:
            jsonl = head_is_jsonl(fd, size, line_cap)
        except OverCap as exc:
            self.__exit__()
            raise InputError(str(exc)) from None
        finally:
            os.close(fd)
        if not jsonl:
            self.__exit__()
            raise InputError(f"{name} is not a JSONL transcript (none of its lines is a JSON "
                             "object); nothing was stored",
                             hint="give the .jsonl file the harness wrote")
        return path

    def __exit__(self, *exc) -> None:
        import os

        if self.tmp:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = ""


def register(app, history, daemon) -> None:
    from pathlib import Path

    import typer

    @history.command("capture")
    def capture_cmd(
        file: str = typer.Argument(..., help="Transcript file, or - for stdin."),
        session: Optional[str] = typer.Option(None, "--session", help="Session id (default: the file name without extension; required for stdin)."),
        agent_id: str = typer.Option("", "--agent-id", help="Store it as this sub-agent of the session."),
        agent_type: str = typer.Option("", "--agent-type", help="The sub-agent's type."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Redact and store one transcript now (no staging). Refuses outside a git
        checkout, and refuses a file that is no JSONL transcript (as hook intake does).
        The record says it was captured by hand: no lineage source; a sub-agent's
        lineage comes from the harness's ``.meta.json`` beside the file, if any."""
        from abcd_daemon.intake.harness import HarnessLineage, read_lineage
        from abcd_daemon.queue.scanners import ScannerPool
        from abcd_daemon.store.capture import capture_file
        from abcd_daemon.store.meta import CaptureMeta

        try:
            root, lane = runtime.checkout()
            if file == "-" and not session:
                raise InputError("--session <id> is required when reading from stdin")
            if file != "-":
                session = session or Path(file).name.rsplit(".", 1)[0]
            # No lineage_source: none of hook / ingest / migrated is true of a capture
            # by hand, and the field is optional ("not known").
            if agent_id:
                lineage = read_lineage(file) if file != "-" else HarnessLineage()
                meta = CaptureMeta(
                    session_id=session or "", agent_id=agent_id,
                    agent_type=agent_type or lineage.agent_type,
                    parent_agent_id=lineage.parent_agent_id, spawn_depth=lineage.spawn_depth,
                    spawn_tool_use_id=lineage.spawn_tool_use_id,
                    spawn_attribution=lineage.attribution)
            else:
                meta = CaptureMeta(session_id=session or "")
            meta.validate()
            cfg = runtime.config()
            with _readable(file, lane, cfg) as path:
                result = capture_file(lane, path, meta, scanner=ScannerPool(cfg).get(root),
                                      config=cfg, now_ns=runtime.now_ns(),
                                      what="stdin" if file == "-" else "transcript")
        except PermanentError as err:  # capture quarantines nothing: say what is true
            err.hint = (f"capture keeps no copy: {'stdin was' if file == '-' else 'the file is'} "
                        "left as it was and nothing was stored. Remove or rewrite what that "
                        "line holds (`abcd redact FILE` shows what would be masked), then "
                        "capture it again")
            output.fail(err, as_json=as_json)
        except AbcdError as err:
            output.fail(err, as_json=as_json)
        rec = result.record
        if as_json:
            output.emit_json({"record": rec, "path": str(lane.records / rec.name),
                              "wrote": result.wrote, "superseded": result.superseded})
            return
        if result.wrote:
            output.say(f"abcd history capture — stored {_who(rec)} ({rec.source_kind})")
            output.say(f"  path: {lane.records / rec.name}")
            output.say(f"  redacted: secrets={rec.redacted_secrets} home={rec.redacted_home_paths}")
            for name in result.superseded:
                output.say(f"  superseded: {name}")
        else:
            output.say(f"abcd history capture — {_who(rec)} already stored (no-op); "
                       f"redacted secrets={rec.redacted_secrets} home={rec.redacted_home_paths}")

    @history.command("list")
    def list_cmd(
        session: Optional[str] = typer.Option(None, "--session", help="Only this session (a unique prefix of 6+ characters will do): main thread first, then its sub-agents."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """List the records of this repository, newest first (metadata only)."""
        list_records(session=session, as_json=as_json)

    @history.command("show")
    def show_cmd(
        key: str = typer.Argument(..., help="A record filename, an agent id, or a session id."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Print one record: its metadata, then its redacted transcript."""
        show(key, as_json=as_json)


def list_records(*, session: str | None = None, as_json: bool = False) -> None:
    """``abcd history list``: this repository's records, newest first (metadata only);
    with ``session`` (a unique prefix will do) that session's, main thread first."""
    from abcd_daemon.wire.messages import ListRequest

    from ..connect import ask

    try:
        lane = runtime.lane()
        reply = ask(ListRequest(root_sha=lane.root_sha, session_id=session or ""))
        if reply is not None:
            records = reply.records
        else:
            from abcd_daemon.store.records import list_for_session, list_records as listed
            from abcd_daemon.store.sessions import expand_session

            records = (list_for_session(lane, expand_session([lane], session)) if session
                       else listed(lane))
    except AbcdError as err:
        output.fail(err, as_json=as_json)
    if as_json:
        output.emit_json([dict(_record_json(r), path=str(lane.records / r.name)) for r in records])
        return
    if not records:
        output.say(f"abcd history — no transcript stored for session {session} in this repo"
                   if session else "abcd history — no transcripts stored for this repo")
        return
    for r in records:
        output.say(f"{_short_time(r.captured_at)}  {_who(r)}  {r.source_kind}  "
                   f"redacted secrets={r.redacted_secrets} home={r.redacted_home_paths}")
    if session:
        session = records[0].session_id  # a short id, as the store spells it
        output.say(f"{len(records)} record(s) for session {session} — the main thread first, "
                   "then every sub-agent it spawned.")


def show(key: str, *, as_json: bool = False) -> None:
    """``abcd history show KEY``: one record's metadata, then its redacted transcript
    (streamed as it is read or arrives); with ``as_json`` one document holding both."""
    if not as_json:
        _show_streamed(key)
        return
    import tempfile

    from abcd_daemon.wire.messages import ShowRequest

    from ..connect import ask_into
    from ..show_print import emit_json_with_body

    with tempfile.TemporaryFile() as held:  # owner-only, already unlinked
        try:
            lane = runtime.lane()
            head = ask_into(ShowRequest(root_sha=lane.root_sha, key=key), held.write)
            if head is not None:
                record = head.record
            else:
                from abcd_daemon.store.body import body_of
                from abcd_daemon.store.sessions import resolve_record

                record = resolve_record(lane, key)
                for block in body_of(lane, record).chunks():
                    held.write(block)
        except AbcdError as err:
            output.fail(err, as_json=as_json)
        emit_json_with_body(dict(_record_json(record), path=str(lane.records / record.name)), held)


def _show_streamed(key: str) -> None:
    """The human ``show``: the metadata, then the body as it is read or arrives, never
    held whole (a record of any size)."""
    from abcd_daemon.wire.messages import ShowRequest

    from ..connect import ask_into
    from ..show_print import BodyPrinter, show_head

    printer = BodyPrinter()
    try:
        lane = runtime.lane()
        head = ask_into(ShowRequest(root_sha=lane.root_sha, key=key), printer.write,
                        on_reply=lambda reply: show_head(reply.record, lane))
        if head is None:
            from abcd_daemon.store.body import body_of
            from abcd_daemon.store.sessions import resolve_record

            record = resolve_record(lane, key)
            body = body_of(lane, record)
            show_head(record, lane)
            for block in body.chunks():
                printer.write(block)
    except AbcdError as err:
        output.fail(err, as_json=False)
    printer.close()


def _record_json(record) -> dict:
    import msgspec

    data = msgspec.to_builtins(record)
    data.pop("body_bytes", None)
    return data
