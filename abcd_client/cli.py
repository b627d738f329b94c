"""The ``abcd`` command: ``abcd history …``, ``abcd daemon …``, ``abcd hook <event>``.

Each verb lives in a module under :mod:`abcd_client.commands` that registers itself on
one of the sub-apps below. Verbs import heavy modules (trio, the scanner) inside their
bodies, so ``abcd --help`` and the hook path stay fast.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="abcd",
    help="Keep a redacted, per-repository corpus of AI coding-agent sessions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
history_app = typer.Typer(
    help="The transcript corpus of the current repository: list, show, reconstruct, "
    "the staging queue. Refuses outside a git checkout (except `staged --all-repos`).",
    no_args_is_help=True,
)
daemon_app = typer.Typer(help="The per-user daemon and its service units.", no_args_is_help=True)
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


def _register() -> None:
    import importlib

    from .commands import NAMES

    for name in NAMES:
        module = importlib.import_module(f"{__package__}.commands.{name}")
        module.register(app=app, history=history_app, daemon=daemon_app)


def main() -> None:
    _register()
    app()
