"""Who may talk to the viewer: the person who started it, from this machine, reading.

The Jupyter pattern: ``abcd view`` draws a random token per launch
(:func:`new_token`, ``secrets.token_urlsafe``) and prints a URL that carries it. Rules,
checked on every request before anything else runs (:func:`decide`, pure):

- the ``Host`` header must be the loopback name and the port the server is bound to
  (``127.0.0.1:<port>`` or ``localhost:<port>``): a page on another origin that
  rebinds a DNS name to 127.0.0.1 sends its own name and is refused (DNS rebinding);
- the token must be presented, as ``?token=`` or as the per-port cookie the server
  sets when it first sees a valid ``?token=`` (so links need not carry it); it is
  compared in constant time; without it: 403;
- only GET and HEAD exist: the viewer has no verb that changes anything (405);
- every answer carries a Content-Security-Policy allowing nothing outside the server,
  ``no-referrer`` and ``nosniff``; the token is never logged.

:class:`Guard` applies these to an ASGI app.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs

from .shell import SERVED_CSP

COOKIE_PREFIX = "abcd_view_"


def new_token() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Verdict:
    status: int  # 0: allowed
    reason: str = ""
    set_cookie: bool = False


def cookie_name(port: int) -> str:
    return f"{COOKIE_PREFIX}{port}"


def _cookie(header: str, name: str) -> str:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return ""


def decide(*, method: str, host: str, query: str, cookie: str, token: str, port: int) -> Verdict:
    """The verdict on one request (see the module docstring)."""
    if host.lower() not in (f"127.0.0.1:{port}", f"localhost:{port}"):
        return Verdict(403, "this viewer answers only to its own loopback address")
    offered = parse_qs(query).get("token", [""])[0]
    from_query = bool(offered) and secrets.compare_digest(offered.encode(), token.encode())
    from_cookie = secrets.compare_digest(_cookie(cookie, cookie_name(port)).encode(),
                                         token.encode())
    if not (from_query or from_cookie):
        return Verdict(403, "open the URL `abcd view` printed: it carries this launch's token")
    if method not in ("GET", "HEAD"):
        return Verdict(405, "the viewer is read-only")
    return Verdict(0, set_cookie=from_query and not from_cookie)


SECURITY_HEADERS = [
    (b"content-security-policy", SERVED_CSP.encode()),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


class Guard:
    """ASGI middleware: :func:`decide` on every HTTP request; security headers on every
    answer; the cookie set on the first answer to a valid ``?token=``."""

    def __init__(self, app, *, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.port = port

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                return await self.app(scope, receive, send)
            return  # no websockets
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        verdict = decide(method=scope["method"], host=headers.get("host", ""),
                         query=scope.get("query_string", b"").decode("latin-1"),
                         cookie=headers.get("cookie", ""), token=self.token, port=self.port)
        extra = list(SECURITY_HEADERS)
        if verdict.set_cookie:
            extra.append((b"set-cookie", (f"{cookie_name(self.port)}={self.token}; Path=/; "
                                          "HttpOnly; SameSite=Strict").encode()))
        if verdict.status:
            body = f"{verdict.status}: {verdict.reason}\n".encode()
            await send({"type": "http.response.start", "status": verdict.status,
                        "headers": extra + [(b"content-type", b"text/plain; charset=utf-8"),
                                            (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = dict(message, headers=list(message.get("headers", [])) + extra)
            await send(message)

        await self.app(scope, receive, send_with_headers)
