"""The viewer's ASGI app: routes, the session cache, and the worker-thread boundary.

Routes (GET/HEAD only; :class:`~.auth.Guard` runs first on every one):

    /                                   repositories
    /r/<root>[?page=N]                  that repository's sessions, 100 a page (+ search box)
    /r/<root>/s/<session>               the session page (timeline, bars, first turns)
    /r/<root>/s/<session>/part/<v>/<k>  part k of version v of that page (lazy loading)
    /r/<root>/s/<session>/export        the static export (one self-contained file)
    /search?q=…[&repo=<root>]           search hits, linking to the turn
    /static/<name>                      the package's own assets (a fixed list)

Contracts:
- the core is synchronous: every source call and every render runs in a worker
  thread (``anyio.to_thread`` on trio), so the event loop only moves bytes;
- a session page is streamed as it is built: its head (title, crumbs, asset links)
  goes out before the session is reconstructed, then the header and pictures, then
  the first turns (:meth:`Viewer.session_chunks`); an unknown session is still a 404,
  decided from the record listing before anything is sent;
- a session page is built once per version — the record set's fingerprint (names,
  content hashes and sizes of its records) — and kept in a small LRU, so its parts
  are cut from the same reconstruction the page came from; a part of a version that
  is no longer current is 409 (the page says reload), never another version's turns;
- a repository's session list is rebuilt only when its records directory or the
  index changed;
- errors are pages: an unknown repository or session 404, a malformed id 404, a core
  refusal 500 with its message (never a traceback).

Built with Starlette (routing, responses) on hypercorn's trio worker — the measured
choice recorded in ``docs/architecture.md``.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route

from ..errors import AbcdError, InputError, NotFoundError
from ..ids import is_valid_id
from . import pages
from .auth import Guard
from .session_page import SessionView
from .session_page import title as session_title
from .shell import ASSETS, TAIL, asset
from .shell import head as shell_head

CACHE_SIZE = 6
#: How much of a session page's body is rendered before it is sent (after the pictures).
STREAM_BATCH = 16_000


class Viewer:
    """The synchronous heart of the app: a source and the page cache."""

    def __init__(self, source, *, cache_size: int = CACHE_SIZE) -> None:
        self.source = source
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple[str, str], tuple[str, SessionView]] = OrderedDict()
        self._lock = threading.Lock()
        self._lists: dict[tuple[str, int], tuple[tuple, str]] = {}

    def sessions_page(self, root: str, page_no: int = 1) -> str:
        """Page ``page_no`` (from 1) of a repository's session list, read from the index
        (:meth:`~.source.LocalSource.session_page`) and rebuilt only when its records or
        the index changed (:meth:`~.source.LocalSource.listing_stamp`). A page past the
        last is 404."""
        if page_no < 1:
            raise NotFoundError(f"no page {page_no} of this list")
        stamp = self.source.listing_stamp(root)
        cached = self._lists.get((root, page_no))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        listing = self.source.session_page(root, (page_no - 1) * pages.PAGE_SIZE, pages.PAGE_SIZE)
        if listing is not None and page_no > 1 and not listing.sessions:
            raise NotFoundError(f"no page {page_no} of this list")
        page = pages.sessions(root, self.source.repository_name(root), listing, page_no)
        if self.source.listing_stamp(root) == stamp:  # nothing changed while it was built
            if len(self._lists) >= 64:
                self._lists.clear()
            self._lists[(root, page_no)] = (stamp, page)
        return page

    def version(self, root: str, session_id: str) -> str:
        records = self.source.session_records(root, session_id)
        digest = hashlib.sha256()
        for r in sorted(records, key=lambda r: r.name):
            digest.update(f"{r.name}\0{r.source_sha256}\0{r.body_bytes}\n".encode())
        return digest.hexdigest()[:16]

    def view(self, root: str, session_id: str) -> tuple[str, SessionView]:
        version = self.version(root, session_id)
        key = (root, session_id)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] == version:
                self._cache.move_to_end(key)
                return cached
        built = SessionView(self.source.reconstruction(root, session_id),
                            self.source.thread_costs(root, session_id),
                            repository=self.source.repository_name(root))
        with self._lock:
            self._cache[key] = (version, built)
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return version, built

    def crumbs(self, root: str, session_id: str) -> list[tuple[str, str]]:
        name = self.source.repository_name(root)
        return [pages.HOME, (pages.repo_href(root), pages.repo_label(name, root)),
                ("", f"session <code>{pages.e(session_id[:8])}</code>")]

    def built_page(self, root: str, session_id: str) -> str | None:
        """The served page of the session's current version if it was built already,
        else None. NotFoundError when the repository or the session is unknown (checked
        from the record listing alone, so a 404 never waits for a reconstruction)."""
        version = self.version(root, session_id)
        with self._lock:
            cached = self._cache.get((root, session_id))
        if cached is not None and cached[0] == version:
            return cached[1].served
        return None

    def session_chunks(self, root: str, session_id: str, head: str) -> Iterator[str]:
        """The session page's body after ``head``, in pieces as they are rendered (the
        header and pictures first, then batches of about :data:`STREAM_BATCH` characters),
        then :data:`~.shell.TAIL`; once the last is taken the whole page is kept as the
        version's served page. The reconstruction runs when the first piece is asked for."""
        version, view = self.view(root, session_id)
        if view.served_body is not None:  # built meanwhile by another request
            yield view.served_body + TAIL
            return
        base = pages.session_href(root, session_id)
        body = []
        batch: list[str] = []
        size = 0
        for piece in view.chunks(lazy=True, part_url=lambda k: f"{base}/part/{version}/{k}"):
            body.append(piece)
            batch.append(piece)
            size += len(piece)
            if len(body) == 1 or size >= STREAM_BATCH:  # the pictures go out alone, first
                yield "".join(batch)
                batch, size = [], 0
        yield "".join(batch) + TAIL
        view.served_body = "".join(body)
        view.served = head + view.served_body + TAIL

    def session_page(self, root: str, session_id: str) -> str:
        """The whole session page (what the streamed answer adds up to)."""
        built = self.built_page(root, session_id)
        if built is not None:
            return built
        head = shell_head(session_title(session_id), crumbs=self.crumbs(root, session_id))
        return head + "".join(self.session_chunks(root, session_id, head))

    def part(self, root: str, session_id: str, version: str, k: int) -> str:
        current, view = self.view(root, session_id)
        if version != current:
            raise Stale()
        return view.part_html(k)

    def export(self, root: str, session_id: str) -> str:
        _, view = self.view(root, session_id)
        return view.page(lazy=False)


class Stale(Exception):
    """A part of a page version that is no longer the session's current one."""


def _ids(request: Request) -> tuple[str, str]:
    root = request.path_params["root"]
    session = request.path_params.get("session", "")
    if session and not is_valid_id(session):
        raise NotFoundError("no such session")
    return root, session


def _error_response(exc: Exception) -> HTMLResponse:
    if isinstance(exc, Stale):
        return HTMLResponse(pages.error(409, "this session changed since the page was built",
                                        "reload the page"), status_code=409)
    if isinstance(exc, (NotFoundError, InputError, IndexError, KeyError)):
        message = str(exc) if isinstance(exc, AbcdError) else "not found"
        return HTMLResponse(pages.error(404, message), status_code=404)
    if isinstance(exc, AbcdError):
        return HTMLResponse(pages.error(500, str(exc), exc.hint or ""), status_code=500)
    raise exc


async def _streamed(viewer: Viewer, root: str, session_id: str, head: str):
    """The session page as it is rendered: ``head`` at once (the browser fetches the
    assets while the session is reconstructed), then each piece from a worker thread.
    A failure after the head is sent (the status is already 200) ends the page with
    what went wrong, said in it."""
    yield head.encode()
    pieces = viewer.session_chunks(root, session_id, head)
    done = object()
    try:
        while (piece := await run_in_threadpool(next, pieces, done)) is not done:
            yield piece.encode()
    except Exception as exc:  # noqa: BLE001 - said in the page, re-raised when not ours
        message = str(exc) if isinstance(exc, AbcdError) else "the page could not be built"
        yield (f'<p class="error">{pages.e(message)}; reload the page</p>' + TAIL).encode()
        if not isinstance(exc, AbcdError):
            raise


def build_app(viewer: Viewer, *, token: str, port: int):
    """The ASGI app: :class:`Viewer` behind :class:`~.auth.Guard`."""

    async def run(fn, *args) -> HTMLResponse:
        try:
            return HTMLResponse(await run_in_threadpool(fn, *args))
        except Exception as exc:  # noqa: BLE001 - mapped to a page, or re-raised
            return _error_response(exc)

    async def home(request: Request):
        return await run(lambda: pages.repositories(viewer.source.repositories()))

    async def repo(request: Request):
        root, _ = _ids(request)
        try:
            page_no = int(request.query_params.get("page", "1"))
        except ValueError:
            return _error_response(NotFoundError("no such page of this list"))
        return await run(viewer.sessions_page, root, page_no)

    async def session(request: Request):
        try:
            root, sid = _ids(request)
            built = await run_in_threadpool(viewer.built_page, root, sid)
            if built is None:
                head = shell_head(session_title(sid),
                                  crumbs=await run_in_threadpool(viewer.crumbs, root, sid))
        except Exception as exc:  # noqa: BLE001 - mapped to a page, or re-raised
            return _error_response(exc)
        if built is not None:
            return HTMLResponse(built)
        return StreamingResponse(_streamed(viewer, root, sid, head), media_type="text/html")

    async def part(request: Request):
        try:
            root, sid = _ids(request)
            k = int(request.path_params["k"])
        except (NotFoundError, ValueError) as exc:
            return _error_response(NotFoundError(str(exc)))
        return await run(viewer.part, root, sid, request.path_params["version"], k)

    async def export(request: Request):
        try:
            root, sid = _ids(request)
        except NotFoundError as exc:
            return _error_response(exc)
        response = await run(viewer.export, root, sid)
        if response.status_code == 200:
            response.headers["content-disposition"] = f'attachment; filename="{sid}.html"'
        return response

    async def search(request: Request):
        query = request.query_params.get("q", "").strip()
        root = request.query_params.get("repo", "")
        if not query:
            return HTMLResponse(pages.search_results("", root, []))
        return await run(lambda: pages.search_results(query, root,
                                                      viewer.source.search(query, root)))

    async def static(request: Request):
        name = request.path_params["name"]
        if name not in ASSETS:
            return HTMLResponse(pages.error(404, "no such asset"), status_code=404)
        return Response(asset(name), media_type=ASSETS[name])

    routes = [
        Route("/", home, methods=["GET", "HEAD"]),
        Route("/r/{root}", repo, methods=["GET", "HEAD"]),
        Route("/r/{root}/s/{session}", session, methods=["GET", "HEAD"]),
        Route("/r/{root}/s/{session}/part/{version}/{k}", part, methods=["GET", "HEAD"]),
        Route("/r/{root}/s/{session}/export", export, methods=["GET", "HEAD"]),
        Route("/search", search, methods=["GET", "HEAD"]),
        Route("/static/{name}", static, methods=["GET", "HEAD"]),
    ]
    return Guard(Starlette(routes=routes), token=token, port=port)
