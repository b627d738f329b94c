"""How the viewer's stack was chosen: Markdown renderers and ASGI stacks on trio, measured.

(a) Markdown: the 55-agent 8 MB synthetic session's artefact (``bench/reconstruct.py``,
    8 KiB per-block cap) rendered whole by markdown-it-py (CommonMark; html, link,
    image and autolink rules off — the viewer's configuration), mistune (``escape=True``)
    and Python-Markdown (``fenced_code``): best-of-3 seconds, and whether a hostile
    snippet outside a fence comes out as markup (``<img``, ``<a ``, ``<b>``).
(b) ASGI on trio: hypercorn's trio worker serving a 1 kB and a 250 kB page from a bare
    ASGI callable and from Starlette; median ms over 300 keep-alive GETs; and the import
    time of each piece (fresh interpreter, after trio).

mistune and Markdown are not dependencies of abcd: ``pip install mistune markdown``
first (each missing one is reported as null). Last line: one JSON object.

    .venv/bin/python bench/view_stack.py
"""

from __future__ import annotations

import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import emit_json  # noqa: E402

HOSTILE = "- type: <b>x</b> ![i](http://198.51.100.7/z.png) [l](javascript:x) *em*\n"


def artefact() -> str:
    from abcd_daemon.paths import Home
    from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
    from bench.reconstruct import SESSION, build, store

    with tempfile.TemporaryDirectory(prefix="abcd-bench-") as tmp:
        lane = store(Home(Path(tmp) / "home"), build(55, 8.0))
        r = reconstruct(lane, ReconstructOptions(session_id=SESSION, max_block_bytes=8192), now_ns=0)
    return r.artefact.decode()


def best(fn, n: int = 3) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return round(min(times), 3)


def markdown_figures(text: str) -> dict:
    out = {}
    from abcd_daemon.web.markdown import to_html

    out["markdown_it_s"] = best(lambda: to_html(text))
    out["markdown_it_markup_from_text"] = any(t in to_html(HOSTILE) for t in ("<img", "<a ", "<b>"))
    try:
        import mistune

        md = mistune.create_markdown(escape=True)
        out["mistune_s"] = best(lambda: md(text))
        out["mistune_markup_from_text"] = any(t in md(HOSTILE) for t in ("<img", "<a ", "<b>"))
    except ImportError:
        out["mistune_s"] = None
    try:
        import markdown

        out["python_markdown_s"] = best(lambda: markdown.markdown(text, extensions=["fenced_code"]), 1)
        rendered = markdown.markdown(HOSTILE)
        out["python_markdown_markup_from_text"] = any(t in rendered for t in ("<img", "<a ", "<b>"))
    except ImportError:
        out["python_markdown_s"] = None
    out["artefact_mb"] = round(len(text.encode()) / 1e6, 2)
    return out


SMALL = b"<p>hello</p>" * 80
BIG = b"x" * 250_000


async def bare(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = BIG if scope["path"] == "/big" else SMALL
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/html"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def starlette_app():
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    async def small(request):
        return Response(SMALL, media_type="text/html")

    async def big(request):
        return Response(BIG, media_type="text/html")

    return Starlette(routes=[Route("/", small), Route("/big", big)])


def _client(port: int, path: str, n: int) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        conn.request("GET", path)
        conn.getresponse().read()
        times.append(time.perf_counter() - start)
    conn.close()
    return round(statistics.median(times) * 1000, 3)


def latency(app) -> dict:
    import trio
    from hypercorn.config import Config
    from hypercorn.trio import serve

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = config.errorlog = None
    result = {}

    async def main():
        stop = trio.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: serve(app, config, shutdown_trigger=stop.wait))
            await trio.sleep(0.3)
            result["small_ms"] = await trio.to_thread.run_sync(_client, port, "/", 300)
            result["big_ms"] = await trio.to_thread.run_sync(_client, port, "/big", 300)
            stop.set()

    trio.run(main)
    return result


def import_ms(stmt: str) -> float:
    code = f"import time, trio; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(3)]
    return round(min(runs) * 1000, 1)


def main() -> None:
    figures = markdown_figures(artefact())
    figures["bare_asgi"] = latency(bare)
    figures["starlette"] = latency(starlette_app())
    figures["import_hypercorn_trio_ms"] = import_ms("import hypercorn.trio, hypercorn.config")
    figures["import_starlette_ms"] = import_ms(
        "import hypercorn.trio; t = time.perf_counter(); import starlette.applications, "
        "starlette.routing, starlette.responses")
    figures["import_markdown_it_ms"] = import_ms("import markdown_it")
    figures["loadavg_1m"] = round(os.getloadavg()[0], 2)
    emit_json(figures)


if __name__ == "__main__":
    main()
