"""``abcd view``: a local, private web viewer of the corpus.

Starts the viewer (:mod:`abcd_daemon.web`) in this process on 127.0.0.1 and prints its
URL, which carries a random token drawn for this launch; the browser is opened on it
unless ``--no-open`` (or when there is no graphical display: the URL is printed). Requests without the token, or with a ``Host`` that is not this
loopback address and port, are refused (403); nothing reachable from the browser
changes the store. Records and reconstructions come from the daemon when it runs,
from the same core in-process when it does not (:mod:`abcd_client.view_source`).
Runs until Ctrl-C. Exit status: 0 on Ctrl-C, 2 for a port that cannot be bound.
"""

from __future__ import annotations

import sys

import typer


def _has_display() -> bool:
    """Whether a graphical browser can open here: on a bare terminal Python's
    ``webbrowser`` would start a text browser in it, hiding the printed URL."""
    import os

    return sys.platform == "darwin" or bool(os.environ.get("DISPLAY") or
                                             os.environ.get("WAYLAND_DISPLAY"))


def register(app, history, daemon) -> None:
    @app.command("view")
    def view_cmd(
        port: int = typer.Option(0, "--port", metavar="N",
                                 help="Listen on 127.0.0.1:N (default: a free port)."),
        no_open: bool = typer.Option(False, "--no-open", help="Print the URL; do not open a browser."),
        as_json: bool = typer.Option(False, "--json",
                                     help='Print {"url", "port"} as one JSON line once listening.'),
    ) -> None:
        """Browse your sessions in a local web page: repositories, sessions (tokens,
        cost, search), and each session with its agent timeline drawn, per-agent
        token and cost bars, and the reconstructed transcript. Bound to 127.0.0.1,
        token-protected, read-only; runs until Ctrl-C."""
        import trio

        import signal

        from abcd_daemon.errors import InputError
        from abcd_daemon.web.serve import bind_socket, serve

        from .. import output, runtime
        from ..view_source import DaemonSource

        if not 0 <= port <= 65535:
            output.fail(InputError(f"--port {port} is not a TCP port (0-65535)"), as_json=as_json)

        def ready(url: str) -> None:
            if as_json:  # one line, so a script can read it while the server runs
                import json
                from urllib.parse import urlsplit

                sys.stdout.write(json.dumps({"url": url, "port": urlsplit(url).port}) + "\n")
            else:
                output.say(f"abcd view — serving your sessions at\n\n    {url}\n\n"
                           "Open that URL (it carries this launch's token). Ctrl-C stops.")
            sys.stdout.flush()
            if not no_open and _has_display():
                import webbrowser

                try:
                    webbrowser.open(url)
                except Exception:  # noqa: BLE001 - the URL is printed; a browser is a courtesy
                    pass

        source = DaemonSource(runtime.home(), runtime.config().pricing)
        try:
            sock = bind_socket(port)
        except OSError as exc:
            output.fail(InputError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}",
                                   hint="choose another --port, or omit it for a free one"),
                        as_json=as_json)

        async def main() -> None:
            stop = trio.Event()
            async with trio.open_nursery() as nursery:
                async def on_signal() -> None:
                    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                        async for _ in signals:
                            stop.set()
                            return

                nursery.start_soon(on_signal)
                await serve(source, on_ready=ready, shutdown=stop, sock=sock)
                nursery.cancel_scope.cancel()

        trio.run(main)
        if not as_json:
            output.say("abcd view — stopped")
