"""``abcd search QUERY`` and ``abcd index rebuild``: find any turn of any session.

Served by the daemon when one answers (its index is kept level as records land, and
a lane whose records changed behind its back is synced before it is read); when none
does, the same core runs in-process on the index, first brought level with the
records on disk (``sync``: cheap when nothing changed). Either way a record stored a
moment ago is found, and a crash that left the index behind is repaired by the next
search. ``abcd index rebuild`` derives it again from scratch, with progress on a
terminal. The served path imports neither SQLite, the index core nor typer
(:mod:`abcd_client.quick` calls :func:`search` directly).
"""

from __future__ import annotations

import re
import sys

from abcd_daemon.errors import AbcdError, InputError

from .. import output, runtime


def parse_when(value: str, *, now_ns: int) -> int:
    """``value`` as epoch ns: an ISO date or time (UTC unless it says), or a span
    back from now (``90m``, ``36h``, ``7d``, ``2w``). Raises InputError."""
    m = re.fullmatch(r"(\d+)([mhdw])", value.strip())
    if m:
        unit = {"m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]
        return now_ns - int(m.group(1)) * unit * 1_000_000_000
    import datetime as _dt

    try:
        stamp = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"not a time: {value!r}",
                         hint="use an ISO date (2026-11-30), a time (2026-11-30T14:00) or a span (7d, 36h)") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.timezone.utc)
    return int(stamp.timestamp() * 1e9)


def time_window(since: str, until: str, *, as_json: bool) -> tuple[int, int]:
    """``--since`` / ``--until`` as epoch ns (0: open), read against one clock. Exits
    through :func:`output.fail` on a value that is not a time."""
    now = runtime.now_ns()
    try:
        return (parse_when(since, now_ns=now) if since else 0,
                parse_when(until, now_ns=now) if until else 0)
    except InputError as err:
        output.fail(err, as_json=as_json)


def index_roots(all_repos: bool, *, as_json: bool) -> tuple[str, ...]:
    """The repository roots a verb reads: this checkout's, or none (every one) with
    ``all_repos``. Exits through :func:`output.fail` outside a checkout."""
    if all_repos:
        return ()
    try:
        return (runtime.lane_key(),)
    except AbcdError as err:
        output.fail(err, as_json=as_json)


def served(request, *, as_json: bool):
    """The daemon's reply to ``request``, or None when no daemon answers (the verb
    then runs in-process); a daemon's refusal exits as an in-process one would."""
    from ..connect import ask

    try:
        return ask(request)
    except AbcdError as err:
        output.fail(err, as_json=as_json)


def synced_index(roots: tuple[str, ...], answer, *, as_json: bool):
    """Run ``answer(conn, roots)`` in-process on the index brought level with the
    records of ``roots`` (every repository when empty) and return its result; any
    failure exits through :func:`output.fail` with what was wrong. Shared by
    ``search`` and ``usage`` for when no daemon answers."""
    from abcd_daemon.index.db import connect, sync
    from abcd_daemon.store.lane import Lane

    try:
        home = runtime.home()
        conn = connect(home)
        try:
            sync(conn, home, lanes=[Lane(home, r) for r in roots] if roots else None)
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


def search(query: str, *, all_repos: bool = False, session: str = "", agent_type: str = "", role: str = "",
           tool: str = "", since: str = "", until: str = "", limit: int = 20, as_json: bool = False) -> None:
    """``abcd search``: print the best-ranked turns matching ``query`` (the typer command
    and :mod:`abcd_client.quick` both call this).

    Served, it speaks the wire's JSON form (:mod:`abcd_client.json_client`) and imports
    no msgspec; in-process, the hits are put through the same JSON, so both print from
    one form, byte for byte the same. The daemon and the in-process core check the
    query and the filters (``--role`` included) with the same words."""
    for name, value in (("query", query), ("--session", session), ("--agent-type", agent_type), ("--tool", tool)):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:  # a byte of the command line that is not UTF-8
                output.fail(InputError(f"the {name} is not UTF-8 text (the command line held a byte that "
                                       "is not)", hint="type it again in a UTF-8 terminal"), as_json=as_json)
    since_ns, until_ns = time_window(since, until, as_json=as_json)
    roots = index_roots(all_repos, as_json=as_json)
    # the fields of SearchRequest (abcd_daemon/wire/messages.py); Filters has the same
    fields = dict(roots=list(roots), session=session, agent_type=agent_type, role=role, tool=tool,
                  since_ns=since_ns, until_ns=until_ns, limit=limit)
    from .. import json_client, json_text

    try:
        reply = json_client.ask("search", {"query": query, **fields})
    except AbcdError as err:
        output.fail(err, as_json=as_json)
    if reply is not None:
        hits = reply["hits"]
    else:
        import msgspec

        from abcd_daemon.index.query import Filters, search as search_index

        f = Filters(**{**fields, "roots": roots})
        found = synced_index(roots, lambda conn, _roots: search_index(conn, query, f), as_json=as_json)
        hits = json_text.loads(msgspec.json.encode(found))
    if as_json:
        output.emit_decoded({"query": query, "hits": hits})
        return
    if not hits:
        output.say(f"abcd search: nothing matches {query!r}")
        return
    for h in hits:
        agent = f"agent {h['thread'][:12]} ({h['agent_type'] or 'type unknown'})"
        thread = "main" if h["thread"] == "main" else agent
        output.say(f"{h['session_id'][:8]}  {h['when'] or '—'}  {thread}  turn {h['turn']} [{h['role']}]")
        output.say(f"    {h['snippet']}")


def register(app, history, daemon) -> None:
    import typer

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
        search(query, all_repos=all_repos, session=session, agent_type=agent_type, role=role, tool=tool,
               since=since, until=until, limit=limit, as_json=as_json)

    @index_app.command("rebuild")
    def rebuild_cmd(as_json: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
        """Drop the index and derive it again from every stored record."""
        from abcd_daemon.wire.messages import IndexRebuildRequest

        from ..connect import ask_with_progress

        tty = sys.stderr.isatty() and not as_json

        def progress(done: int, total: int, *_bytes) -> None:
            if tty:
                sys.stderr.write(f"\rindexing {done}/{total} records")
                sys.stderr.flush()

        try:
            reply = ask_with_progress(IndexRebuildRequest(), progress)
            if reply is not None:
                indexed = reply.indexed
            else:
                from abcd_daemon.index.db import rebuild

                indexed, _ = rebuild(runtime.home(), progress)
        except (AbcdError, OSError) as err:
            output.fail(err if isinstance(err, AbcdError) else InputError(str(err)), as_json=as_json)
        if tty:
            sys.stderr.write("\n")
        if as_json:
            output.emit_json({"indexed": indexed})
        else:
            output.say(f"abcd index rebuild — {indexed} record(s) indexed")
