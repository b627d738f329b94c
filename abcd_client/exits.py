"""The exit statuses of every ``abcd`` verb, and the environment they read — one table
each, rendered into the command reference (``tools/gen_cli_reference.py``) and checked
against the error tree (``tests/client/test_exit_codes.py``).

``abcd hook`` is the one exception, by design: it exits 0 on every path (DESIGN §3.1).
"""

from __future__ import annotations

#: (status, meaning). An AbcdError carries its status (``exit_code``); click's usage
#: errors (an unknown flag, a missing argument) are 2 as well.
EXIT_CODES = (
    (0, "done: everything asked for was done (a listing with nothing in it included)"),
    (1, "refused or failed: a record, session or daemon that is not there, a capture "
        "refused by redaction, a write that failed, any session of a batch that failed, "
        "a daemon that is not running (`daemon status`)"),
    (2, "bad input or usage: an unknown flag or verb, a malformed id or date, an "
        "ambiguous short id, a file that is empty, not a regular file or over its cap"),
)

#: (variable, what it does).
ENVIRONMENT = (
    ("ABCD_HOME", "The store (default `~/.abcd`). One daemon serves one store: "
                  "`ABCD_HOME/daemon.lock` is held for its whole life."),
    ("ABCD_SOCKET", "The daemon's socket (default `$XDG_RUNTIME_DIR/abcd/daemon.sock`, "
                    "else `ABCD_HOME/run/daemon.sock`). Single-instance scope: one daemon "
                    "per socket directory (`daemon.lock` beside the socket) and one per "
                    "store; a second `daemon run` on either exits 1 naming the holder. A "
                    "CLI whose socket reaches a daemon of another store works in-process "
                    "on its own store and says so."),
    ("ABCD_LOCAL", "`1`: never ask the daemon; run every verb in-process."),
)
