"""CLI verbs. Each module named here defines ``register(app, history, daemon)``.

:data:`VERBS` is the index :func:`abcd_client.app.main` uses to import only the module
a command line needs; ``tests/client/test_lazy_commands.py`` checks it against what the
modules really register, so the index cannot drift from the verbs.
"""

NAMES = ("store", "queue", "failed", "daemon", "reconstruct", "ingest", "redact", "rescan", "missing", "search",
         "usage", "view")

#: The command path of every verb → the module that registers it.
VERBS = {
    ("history", "capture"): "store", ("history", "list"): "store", ("history", "show"): "store",
    ("history", "staged"): "queue", ("history", "drain"): "queue", ("history", "discard"): "queue",
    ("history", "retry"): "failed",
    ("history", "reconstruct"): "reconstruct",
    ("history", "ingest"): "ingest", ("history", "migrate"): "ingest",
    ("history", "rescan"): "rescan", ("history", "forget"): "rescan",
    ("history", "missing"): "missing",
    ("daemon", "run"): "daemon", ("daemon", "start"): "daemon", ("daemon", "stop"): "daemon",
    ("daemon", "status"): "daemon", ("daemon", "install"): "daemon",
    ("daemon", "uninstall"): "daemon",
    ("hook",): "daemon",
    ("redact",): "redact",
    ("search",): "search", ("index", "rebuild"): "search",
    ("usage",): "usage",
    ("view",): "view",
}
GROUPS = ("history", "daemon", "index")


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The command modules a command line needs: the one defining the verb it names, or
    — for a help screen, a bare group or a word no verb has — every module whose verbs
    that screen (or click's "no such command" suggestion) lists."""
    words = [w for w in argv if not w.startswith("-")]
    first = words[0] if words else None
    if first is None:  # `abcd`, `abcd --help`, `abcd --version`: the top-level verbs
        return _in_order({mod for path, mod in VERBS.items() if len(path) == 1})
    if (first,) in VERBS:
        return (VERBS[(first,)],)
    if first in GROUPS:
        verb = words[1] if len(words) > 1 else None
        if (first, verb) in VERBS:
            return (VERBS[(first, verb)],)
        return _in_order({mod for path, mod in VERBS.items() if path[0] == first})
    return NAMES


def _in_order(modules: set[str]) -> tuple[str, ...]:
    """``modules`` in :data:`NAMES` order (the order help screens list verbs in)."""
    return tuple(name for name in NAMES if name in modules)
