"""The thin async shell: serve the viewer on 127.0.0.1 with hypercorn's trio worker.

Contracts:
- binds 127.0.0.1 only (never a wildcard address), on ``port`` (0: a free one chosen
  by the kernel, read back before the URL is printed);
- the access log is off (every URL could carry the token) and so is hypercorn's error
  log to stderr beyond startup failures; ``on_ready(url)`` receives the URL with the
  token once the socket listens;
- the index is refreshed in the background every ``SYNC_EVERY_S`` seconds;
- runs until cancelled (Ctrl-C) or ``shutdown`` is set.
"""

from __future__ import annotations

import socket

HOST = "127.0.0.1"


def bind_socket(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:``port`` (OSError when it is taken)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def url_for(port: int, token: str, path: str = "/") -> str:
    return f"http://{HOST}:{port}{path}?token={token}"


async def serve(source, *, port: int = 0, token: str | None = None, on_ready=None,
                shutdown=None, sock: socket.socket | None = None) -> None:
    """Serve ``source`` (a :class:`~.source.LocalSource`) until cancelled or
    ``shutdown`` (a ``trio.Event``) is set; on ``sock`` (from :func:`bind_socket`, so a
    caller can report a taken port before the event loop starts) or a new one."""
    import trio
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve

    from .app import Viewer, build_app
    from .auth import new_token

    sock = sock or bind_socket(port)
    port = sock.getsockname()[1]
    token = token or new_token()
    config = Config()
    config.accesslog = None
    config.errorlog = None
    config.bind = [f"fd://{sock.detach()}"]  # hypercorn owns (and closes) it now
    config.keep_alive_timeout = 30
    app = build_app(Viewer(source), token=token, port=port)
    from .markdown import warm

    await trio.to_thread.run_sync(warm)  # build the parser before the first page asks
    async with trio.open_nursery() as nursery:
        await nursery.start(_run, hypercorn_serve, app, config, shutdown)
        nursery.start_soon(_refresh, source, shutdown)
        if on_ready is not None:
            on_ready(url_for(port, token))


async def _refresh(source, shutdown) -> None:
    """Keep the index level with the records in the background (pages never wait)."""
    import trio

    from .source import SYNC_EVERY_S

    while shutdown is None or not shutdown.is_set():
        await trio.to_thread.run_sync(source.refresh_index, abandon_on_cancel=True)
        with trio.move_on_after(SYNC_EVERY_S):
            if shutdown is not None:
                await shutdown.wait()
                return
            await trio.sleep_forever()


async def _run(hypercorn_serve, app, config, shutdown, task_status):
    import trio

    trigger = shutdown.wait if shutdown is not None else trio.sleep_forever
    task_status.started()
    await hypercorn_serve(app, config, shutdown_trigger=trigger)
