"""Run the daemon-served read verbs without typer: ``abcd search``, ``abcd usage``,
``abcd history list | show | staged``, ``abcd history reconstruct ID`` (one session, to
``--out DIR`` or ``--out -``) and ``abcd daemon status`` — the verbs people run in a
loop, whose daemon answers in a few milliseconds, less than importing typer.

:func:`parse` reads a command line only when it is plainly well formed: the verb's
words first, then its positional arguments and its long options (``--name value``,
``--name=value``, flags), each as :data:`VERBS` lists them. Anything else — a help
request, an unknown or misspelt option, an option :data:`VERBS` leaves to typer, a
missing or out-of-range value, a positional that starts with ``-``, an option's value
that does (other than ``-`` itself), ``--`` — returns None, and the command line goes to typer
(:mod:`abcd_client.app`), which defines the same verbs and words every help screen and
error. ``tests/client/test_quick.py`` checks that for every option both read the same
values, and that :data:`VERBS` names exactly the options typer declares.

:func:`run` calls the verb's body — the one function its typer command calls too (keyword
arguments with typer's defaults, exiting through :func:`abcd_client.output.fail` or
``SystemExit``) — in served-only mode (:func:`abcd_client.dial.served_only`): when no
daemon answers (none running, ``ABCD_LOCAL=1``, a daemon of another store) the body
raises :class:`~abcd_client.dial.NoDaemon` before it prints anything, and the command
line goes to typer, which runs the same body from the start and works in-process. So the
fast path never imports typer, rich or the in-process core, and a verb prints and exits
the same either way (a daemon's refusal included: the same body renders it). A verb of
:data:`JSON_VERBS` imports no msgspec; any other imports it without typing_extensions
(:func:`_import_msgspec_lean`).
"""

from __future__ import annotations

#: kinds of option: a flag (no value), text, any int, or an int within (lo, hi)
FLAG, TEXT, INT = "flag", "text", "int"

#: command path → (module under abcd_client.commands, body function, positional
#: parameters (name, required, nargs: 1, or -1 for a list of which this reads exactly
#: one), {option: (parameter, kind)}, the options typer declares that only typer reads)
VERBS = {
    ("search",): ("search", "search", (("query", True, 1),), {
        "--all-repos": ("all_repos", FLAG), "--session": ("session", TEXT),
        "--agent-type": ("agent_type", TEXT), "--role": ("role", TEXT), "--tool": ("tool", TEXT),
        "--since": ("since", TEXT), "--until": ("until", TEXT), "--limit": ("limit", (1, 1000)),
        "--json": ("as_json", FLAG)}, ()),
    ("usage",): ("usage", "usage", (("kind", False, 1),), {
        "--all-repos": ("all_repos", FLAG), "--since": ("since", TEXT), "--until": ("until", TEXT),
        "--breakdown": ("breakdown", FLAG), "--json": ("as_json", FLAG)}, ()),
    ("history", "list"): ("store", "list_records", (), {
        "--session": ("session", TEXT), "--json": ("as_json", FLAG)}, ()),
    ("history", "show"): ("store", "show", (("key", True, 1),), {"--json": ("as_json", FLAG)}, ()),
    ("history", "staged"): ("queue", "staged", (), {
        "--all-repos": ("all_repos", FLAG), "--json": ("as_json", FLAG)}, ()),
    ("history", "reconstruct"): ("reconstruct", "reconstruct_sessions", (("session_ids", False, -1),), {
        "--out": ("out", TEXT), "--mode": ("mode", TEXT), "--max-block-bytes": ("max_block_bytes", INT),
        "--json": ("as_json", FLAG)}, ("--all", "--all-repos", "--since", "--format")),
    ("daemon", "status"): ("daemon", "status", (), {"--json": ("as_json", FLAG)}, ()),
}


#: the verbs whose served path speaks the wire's JSON form (:mod:`abcd_client.json_client`)
#: and imports no msgspec at all
JSON_VERBS = frozenset({("search",)})


def _value(kind, value: str):
    """``value`` read as ``kind`` says, or None when typer should read it."""
    if kind == TEXT:
        return value
    if not (value.isascii() and value.isdigit()):
        return None
    number = int(value)
    if kind == INT:
        return number
    lo, hi = kind
    return number if lo <= number <= hi else None


def parse(argv: list[str]):
    """``(command path, {parameter: value})`` for a command line this module runs (only
    what the line gives: the body's defaults fill the rest), or None for typer."""
    path = next((p for p in VERBS if tuple(argv[:len(p)]) == p), None)
    if path is None:
        return None
    _module, _function, positionals, options, _typer_only = VERBS[path]
    values: dict = {}
    given: list[str] = []
    words = iter(argv[len(path):])
    for word in words:
        if not word.startswith("-"):
            given.append(word)
            continue
        name, eq, inline = word.partition("=")
        if name not in options:
            return None
        param, kind = options[name]
        if kind == FLAG:
            if eq:
                return None
            values[param] = True
            continue
        value = inline if eq else next(words, None)
        if value is None or (value.startswith("-") and value != "-"):
            return None
        value = _value(kind, value)
        if value is None:
            return None
        values[param] = value
    if len(given) > len(positionals) or any(req for _n, req, _k in positionals[len(given):]):
        return None
    for (name, _req, nargs), word in zip(positionals, given):
        values[name] = [word] if nargs == -1 else word
    if any(nargs == -1 and name not in values for name, _req, nargs in positionals):
        return None  # a list read here holds exactly one word (typer reads none or many)
    return path, values


def _import_msgspec_lean() -> None:
    """Import the wire codec's msgspec without ``typing_extensions`` (and the ``inspect``
    it pulls in: about half of what importing msgspec costs). msgspec imports it only to
    prefer its ``get_type_hints`` and falls back to :mod:`typing`'s own, which on the
    Pythons abcd supports reads every annotation the wire types use (they use nothing of
    typing_extensions). Afterwards typing_extensions imports as usual (typer needs it
    when the command line falls through); a msgspec that cannot do without it is
    imported the ordinary way."""
    import sys

    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # import → ImportError
    try:
        import msgspec  # noqa: F401
    except ImportError:
        for name in [n for n in sys.modules if n == "msgspec" or n.startswith("msgspec.")]:
            del sys.modules[name]
    finally:
        del sys.modules["typing_extensions"]


def run(argv: list[str]) -> bool:
    """Run ``argv`` here when :func:`parse` reads it and a daemon answers (True: done;
    the body may also exit with its code), else False: typer runs it. A closed stdout
    ends quietly with 1 and Ctrl-C with "Aborted!" and 1, as click's standalone mode does."""
    parsed = parse(argv)
    if parsed is None:
        return False
    import sys

    if parsed[0] not in JSON_VERBS:
        _import_msgspec_lean()
    from . import dial

    path, values = parsed
    module, function, _positionals, _options, _typer_only = VERBS[path]
    # __import__, not importlib.import_module: importing importlib (and the warnings
    # it loads) is a millisecond of every served verb's start-up
    body = getattr(__import__(f"{__package__}.commands.{module}", fromlist=[function]), function)
    dial.served_only(True)
    try:
        body(**values)
        sys.stdout.flush()
    except dial.NoDaemon:
        return False
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")
        raise SystemExit(1) from None
    finally:
        dial.served_only(False)
    return True
