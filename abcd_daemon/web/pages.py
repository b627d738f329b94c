"""The listing pages: repositories, one repository's sessions, search results, errors.

Contracts: every value shown is escaped (:func:`~.shell.e`); ids in links are the
store's own (a root SHA is hex, a session id a safe path component) and still
escaped; a missing figure is ``—``, never 0. Pure; each returns a whole document.
"""

from __future__ import annotations

from urllib.parse import quote

from .bars_svg import cost_label
from .shell import e, line, page, tokens, when

HOME = ("/", "Repositories")


def repo_href(root_sha: str) -> str:
    return f"/r/{quote(root_sha)}"


def session_href(root_sha: str, session_id: str, anchor: str = "") -> str:
    return f"/r/{quote(root_sha)}/s/{quote(session_id)}" + (f"#{quote(anchor)}" if anchor else "")


def repo_label(name: str, root_sha: str) -> str:
    return line(name) if name else f"repository {e(root_sha[:12])}"


def repositories(rows) -> str:
    """The home page; ``rows`` None when the index cannot be read."""
    if rows is None:
        body = ("<h1>abcd</h1><p>The search and usage index cannot be read, so no repository "
                "can be listed; <code>abcd index rebuild</code> derives it again.</p>")
        return page("abcd", body, crumbs=[(HOME[0], HOME[1])])
    if not rows:
        body = ("<h1>abcd</h1><p>No sessions are stored yet. Once the hooks or "
                "<code>abcd history ingest</code> store one, it shows here.</p>")
        return page("abcd", body, crumbs=[(HOME[0], HOME[1])])
    items = "".join(
        f'<tr><td><a href="{e(repo_href(r.root_sha))}">{repo_label(r.name, r.root_sha)}</a></td>'
        f'<td class="num">{r.sessions}</td><td>{e(r.last_captured_at[:16].replace("T", " "))}</td>'
        f"<td><code>{e(r.root_sha[:12])}</code></td></tr>" for r in rows)
    body = (f"<h1>Repositories</h1>{search_form('')}<table><thead><tr><th>repository</th>"
            '<th class="num">sessions</th><th>last captured (UTC)</th><th>root commit</th>'
            f"</tr></thead><tbody>{items}</tbody></table>")
    return page("abcd — repositories", body, crumbs=[HOME])


def search_form(root_sha: str, query: str = "") -> str:
    scope = (f'<input type="hidden" name="repo" value="{e(root_sha)}">' if root_sha else "")
    where = "this repository" if root_sha else "every repository"
    return (f'<form class="search" action="/search" method="get">{scope}'
            f'<input type="search" name="q" value="{e(query)}" placeholder="search {where}"> '
            '<button type="submit">search</button></form>')


def _duration(first: int, last: int) -> str:
    if not first or last < first:
        return "—"
    from ..reconstruct.spans import duration

    return duration((last - first) / 1e9)


#: Sessions per page of a repository's list.
PAGE_SIZE = 100


def list_href(root_sha: str, page_no: int) -> str:
    return repo_href(root_sha) + (f"?page={page_no}" if page_no > 1 else "")


def _pager(root_sha: str, page_no: int, pages_total: int) -> str:
    if pages_total <= 1:
        return ""
    links = []
    if page_no > 1:
        links.append(f'<a rel="prev" href="{e(list_href(root_sha, page_no - 1))}">← newer</a>')
    links.append(f"page {page_no} of {pages_total}")
    if page_no < pages_total:
        links.append(f'<a rel="next" href="{e(list_href(root_sha, page_no + 1))}">older →</a>')
    return f'<nav class="pager">{" · ".join(links)}</nav>'


def sessions(root_sha: str, name: str, listing, page_no: int = 1) -> str:
    """Page ``page_no`` (from 1) of a repository's session list; ``listing`` is that
    page's :class:`~abcd_daemon.index.values.SessionPage` (None: no index to read)."""
    label = repo_label(name, root_sha)
    rows = listing.sessions if listing is not None else []
    total = listing.total if listing is not None else 0
    pages_total = max(1, -(-total // PAGE_SIZE))
    items = "".join(
        f'<tr><td><a href="{e(session_href(root_sha, r.session_id))}"><code>{e(r.session_id[:8])}'
        f'</code></a></td><td>{when(r.first_ns) if r.first_ns else e(r.last_captured_at[:16].replace("T", " ")) + " (captured)"}</td>'
        f'<td class="num">{_duration(r.first_ns, r.last_ns)}</td><td class="num">{r.agents}</td>'
        f'<td class="num">{tokens(r.usage.total if r.usage else None)}</td>'
        f'<td class="num">{cost_label((r.usage.cost_usd, r.usage.unpriced_tokens) if r.usage else None)}</td></tr>'
        for r in rows)
    first = listing.offset + 1 if rows else 0
    shown = (f"{total} session(s), newest first" if pages_total == 1 else
             f"sessions {first}–{listing.offset + len(rows)} of {total}, newest first")
    note = ("The list, tokens and cost come from the search and usage index (as "
            "<code>abcd usage session</code>); — means it holds no figure for that session yet."
            if listing is not None else "The index cannot be read, so no session can be listed.")
    pager = _pager(root_sha, page_no, pages_total)
    body = (f"<h1>{label}</h1>{search_form(root_sha)}<p class=\"muted\">{shown}. {note}</p>"
            f"{pager}<table><thead><tr><th>session</th><th>started (UTC)"
            '</th><th class="num">duration</th><th class="num">agents</th><th class="num">tokens'
            f'</th><th class="num">cost</th></tr></thead><tbody>{items}</tbody></table>{pager}')
    return page(f"abcd — {name or root_sha[:12]}", body, crumbs=[HOME, ("", label)])


def search_results(query: str, root_sha: str, hits) -> str:
    items = "".join(
        f'<li><a href="{e(session_href(h.root, h.session_id, f"t-{h.thread}-{h.turn}"))}">'
        f"<code>{e(h.session_id[:8])}</code> {line(h.thread if h.thread == 'main' else 'agent ' + h.thread)}"
        f" turn {h.turn}</a> <span class=\"muted\">{line(h.role)} · {line(h.when)}</span>"
        f'<div class="snippet">{e(h.snippet)}</div></li>' for h in hits)
    body = (f"<h1>Search</h1>{search_form(root_sha, query)}"
            + (f"<ol>{items}</ol>" if hits else "<p>No turn matches.</p>"))
    return page("abcd — search", body, crumbs=[HOME, ("", "search")])


def error(status: int, message: str, hint: str = "") -> str:
    body = f"<h1>{status}</h1><p>{line(message, 600)}</p>" + (
        f'<p class="muted">{line(hint, 600)}</p>' if hint else "")
    return page(f"abcd — {status}", body, crumbs=[HOME, ("", str(status))])
