"""The typer tree of ``abcd``: ``abcd history …``, ``abcd daemon …``, ``abcd hook <event>``.

Each verb lives in a module under :mod:`abcd_client.commands` that registers itself on
one of the sub-apps below. Start-up is latency (DESIGN §3.9; ``bench/cli.py``), so:

- :func:`main` (entered from :func:`abcd_client.cli.main` when the command line is not
  one :mod:`abcd_client.quick` runs without typer) imports only the command module that
  defines the verb the command line names (:data:`abcd_client.commands.VERBS`); a help
  screen or a word no verb has imports every module the screen lists, so help and "no
  such command" stay complete.
- Help is rendered by click's own formatter (``rich_markup_mode=None``): rich is never
  imported to print a help screen.
- Verbs import heavy modules (trio, the scanner, the reconstruct core, msgspec) inside
  their bodies, so a verb pays only for what it uses.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="abcd",
    help="Keep a redacted, per-repository corpus of AI coding-agent sessions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
history_app = typer.Typer(
    help="The transcript corpus of the current repository: list, show, reconstruct, "
    "the staging queue. Refuses outside a git checkout (except `staged --all-repos`).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
daemon_app = typer.Typer(help="The per-user daemon and its service units.", no_args_is_help=True,
                         rich_markup_mode=None)
app.add_typer(history_app, name="history")
app.add_typer(daemon_app, name="daemon")


def _version(value: bool) -> None:
    if value:
        from abcd_daemon import __version__

        typer.echo(f"abcd {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print abcd's version and exit."),
) -> None:
    """Keep a redacted, per-repository corpus of AI coding-agent sessions."""


_registered: set[str] = set()


def _register(names=None) -> None:
    """Register the verbs of the command modules ``names`` (default: every one), once."""
    import importlib

    from .commands import NAMES

    for name in NAMES if names is None else names:
        if name in _registered:
            continue
        module = importlib.import_module(f"{__package__}.commands.{name}")
        module.register(app=app, history=history_app, daemon=daemon_app)
        _registered.add(name)


def main() -> None:
    """Run this process's command line through typer."""
    import sys

    from .commands import modules_for

    _register(modules_for(sys.argv[1:]))
    app()
