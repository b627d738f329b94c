"""The page shell every viewer page shares: head, assets, navigation, escaping.

Contracts:
- :func:`e` is the one escaper for text in HTML (``&<>"'``) after making it one safe
  line where a label is expected (:func:`line`); nothing reaches a page unescaped
  except HTML this package built (the Markdown renderer's output, our SVG);
- ``assets="linked"`` references the package's own ``/static/`` files (the server);
  ``assets="inline"`` embeds the stylesheet so a page is one self-contained file (the
  static export) and carries a Content-Security-Policy that allows no request at all;
- no page references anything outside its server: no CDN, no font, no analytics.

Pure (reads the packaged stylesheet once).
"""

from __future__ import annotations

import functools
import html
import importlib.resources
import time

from ..termsafe import clean_line

#: What the server allows a page to load (sent as a header by :mod:`.auth`).
SERVED_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
              "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
#: The static export loads nothing: its only style is inline, it has no script.
EXPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'"
ASSETS = {"app.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
          "icon.svg": "image/svg+xml"}


def e(text: object) -> str:
    """``text`` escaped for HTML text and attribute values."""
    return html.escape(str(text), quote=True)


def line(text: str, cap: int = 200) -> str:
    """A participant-influenced label as one safe, escaped line."""
    return e(clean_line(text, cap))


@functools.lru_cache(maxsize=None)
def asset(name: str) -> bytes:
    """The bytes of one packaged asset (a name of :data:`ASSETS`)."""
    if name not in ASSETS:
        raise KeyError(name)
    return importlib.resources.files(__package__).joinpath("static", name).read_bytes()


#: What closes every page :func:`head` opens.
TAIL = "</main></body></html>"


def head(title: str, *, assets: str = "linked", crumbs: list[tuple[str, str]] = ()) -> str:
    """A page's opening, up to and including ``<main>``: what a server can send before
    the body exists (the browser fetches the linked assets meanwhile). ``crumbs`` are
    (href, label) pairs, the last one the current page (its href unused)."""
    if assets == "inline":
        links = (f'<meta http-equiv="Content-Security-Policy" content="{EXPORT_CSP}">'
                 f"<style>{asset('app.css').decode()}</style>")
    else:
        links = ('<link rel="stylesheet" href="/static/app.css">'
                 '<link rel="icon" href="/static/icon.svg" type="image/svg+xml">'
                 '<script src="/static/app.js" defer></script>')
    nav = ""
    if crumbs:
        items = [f'<a href="{e(href)}">{label}</a>' for href, label in crumbs[:-1]]
        items.append(f"<span>{crumbs[-1][1]}</span>")
        nav = f'<nav class="crumbs">{" › ".join(items)}</nav>'
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer">'
            f"<title>{e(title)}</title>{links}</head><body>{nav}<main>")


def page(title: str, body: str, *, assets: str = "linked", crumbs: list[tuple[str, str]] = ()) -> str:
    """A whole HTML document: :func:`head`, ``body``, :data:`TAIL`."""
    return head(title, assets=assets, crumbs=crumbs) + body + TAIL


def when(ns: int) -> str:
    """``YYYY-MM-DD HH:MM`` UTC for epoch ns, ``—`` for 0."""
    if not ns:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ns // 1_000_000_000))


def tokens(n: int | None) -> str:
    """``12,345`` or ``—``."""
    return "—" if n is None else f"{n:,}"
