"""``abcd search QUERY`` and ``abcd index rebuild``: find any turn of any session.

Runs in-process on the index (``abcd_daemon.index``): each search first brings the
index level with the records on disk (``sync``: cheap when nothing changed), so a
record stored a moment ago is found, and a crash that left the index behind is
repaired by the next search. ``abcd index rebuild`` derives it again from scratch,
with progress on a terminal.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys

import typer

from abcd_daemon.errors import AbcdError, InputError

from .. import output, runtime


def parse_when(value: str, *, now_ns: int) -> int:
    """``value`` as epoch ns: an ISO date or time (UTC unless it says), or a span
    back from now (``90m``, ``36h``, ``7d``, ``2w``). Raises InputError."""
    m = re.fullmatch(r"(\d+)([mhdw])", value.strip())
    if m:
        unit = {"m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]
        return now_ns - int(m.group(1)) * unit * 1_000_000_000
    try:
        stamp = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"not a time: {value!r}",
                         hint="use an ISO date (2026-11-30), a time (2026-11-30T14:00) or a span (7d, 36h)") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.timezone.utc)
    return int(stamp.timestamp() * 1e9)


def synced_index(all_repos: bool, answer, *, as_json: bool):
    """Run ``answer(conn, roots)`` on the index brought level with the records — of
    this repository, or of every one with ``all_repos`` (``roots`` is then empty) —
    and return its result; any failure exits through :func:`output.fail` with what
    was wrong. Shared by ``search`` and ``usage``."""
    from abcd_daemon.index.db import connect, sync

    try:
        roots: tuple[str, ...] = ()
        lanes = None
        if not all_repos:
            _root, lane = runtime.checkout()
            roots, lanes = (lane.root_sha,), [lane]
        home = runtime.home()
        conn = connect(home)
        try:
            sync(conn, home, lanes=lanes)
            return answer(conn, roots)
        finally:
            conn.close()
    except ValueError as err:
        output.fail(InputError(str(err)), as_json=as_json)
    except AbcdError as err:
        output.fail(err, as_json=as_json)
    except OSError as err:
        output.fail(InputError(f"cannot open the index: {err.strerror or err}",
                               hint="start the daemon once (`abcd daemon start`) so the store exists"),
                    as_json=as_json)


def register(app, history, daemon) -> None:
    index_app = typer.Typer(help="The search and usage index (derived from records).", no_args_is_help=True)
    app.add_typer(index_app, name="index")

    @app.command("search")
    def search_cmd(
        query: str = typer.Argument(..., help='Words, "a phrase", prefix* (FTS5 syntax; anything else is plain words).'),
        all_repos: bool = typer.Option(False, "--all-repos", help="Every repository, not only this one."),
        session: str = typer.Option("", "--session", help="One session (id or a prefix of it)."),
        agent_type: str = typer.Option("", "--agent-type", help="Sub-agents of this type (`main`: main threads)."),
        role: str = typer.Option("", "--role", help="user, assistant or tool."),
        tool: str = typer.Option("", "--tool", help="Turns calling or answering this tool (e.g. Bash)."),
        since: str = typer.Option("", "--since", help="Not before (ISO time or span: 7d, 36h)."),
        until: str = typer.Option("", "--until", help="Before (ISO time or span)."),
        limit: int = typer.Option(20, "--limit", min=1, max=1000, help="At most this many hits."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Search every stored turn (sub-agents included), best match first."""
        from abcd_daemon.index.query import Filters, search

        def answer(conn, roots):
            now = runtime.now_ns()
            f = Filters(roots=roots, session=session, agent_type=agent_type, role=role, tool=tool,
                        since_ns=parse_when(since, now_ns=now) if since else 0,
                        until_ns=parse_when(until, now_ns=now) if until else 0, limit=limit)
            return search(conn, query, f)

        hits = synced_index(all_repos, answer, as_json=as_json)
        if as_json:
            output.emit_json({"query": query, "hits": [h.as_json() for h in hits]})
            return
        if not hits:
            output.say(f"abcd search: nothing matches {query!r}")
            return
        for h in hits:
            thread = "main" if h.thread == "main" else f"agent {h.thread[:12]} ({h.agent_type or 'type unknown'})"
            output.say(f"{h.session_id[:8]}  {h.when or '—'}  {thread}  turn {h.turn} [{h.role}]")
            output.say(f"    {h.snippet}")

    @index_app.command("rebuild")
    def rebuild_cmd(as_json: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
        """Drop the index and derive it again from every stored record."""
        from abcd_daemon.index.db import rebuild

        tty = sys.stderr.isatty() and not as_json

        def progress(done: int, total: int) -> None:
            if tty:
                sys.stderr.write(f"\rindexing {done}/{total} records")
                sys.stderr.flush()

        try:
            indexed, _ = rebuild(runtime.home(), progress)
        except (AbcdError, OSError) as err:
            output.fail(err if isinstance(err, AbcdError) else InputError(str(err)), as_json=as_json)
        if tty:
            sys.stderr.write("\n")
        if as_json:
            output.emit_json({"indexed": indexed})
        else:
            output.say(f"abcd index rebuild — {indexed} record(s) indexed")
