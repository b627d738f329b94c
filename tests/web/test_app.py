"""The served viewer over real HTTP (hypercorn's trio worker): pages, parts, assets,
and every refusal — token, Host, verb, unknown ids, a stale part."""

from __future__ import annotations

import re

import pytest

from abcd_daemon.web.source import LocalSource

from .support import HOSTILE_SESSION, REAL_SESSION, ROOT, Served, get, make_home, store_hostile, store_real


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = make_home(tmp_path_factory.mktemp("app"))
    store_real(home)
    store_hostile(home)
    s = Served(LocalSource(home))
    s.home = home
    yield s
    s.stop()


def test_the_listings_show_the_repository_and_its_sessions_with_tokens(served):
    status, headers, body = get(served.at("/"))
    assert status == 200 and f"/r/{ROOT}".encode() in body
    assert "default-src 'none'" in headers["content-security-policy"]
    status, _, body = get(served.at(f"/r/{ROOT}"))
    page = body.decode()
    assert status == 200 and REAL_SESSION[:8] in page and HOSTILE_SESSION[:8] in page
    row = re.search(rf"{REAL_SESSION[:8]}.*?</tr>", page).group(0)
    assert re.search(r"\d{1,3}(,\d{3})+", row)  # tokens, from the index


def test_the_first_valid_token_sets_a_cookie_that_then_suffices(served):
    _, headers, _ = get(served.at("/"))
    cookie = headers["set-cookie"].split(";")[0]
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
    status, _, _ = get(f"{served.base}/r/{ROOT}", headers={"Cookie": cookie})
    assert status == 200


def test_without_the_token_with_another_host_or_a_writing_verb_nothing_is_served(served):
    assert get(f"{served.base}/")[0] == 403
    assert get(served.at("/"), headers={"Host": f"rebound.example:{served.port}"})[0] == 403
    assert get(served.at("/"), method="POST")[0] == 405


def test_unknown_or_malformed_ids_are_404_pages(served):
    for path in (f"/r/{'0' * 40}", "/r/not-a-sha", f"/r/{ROOT}/s/nope-000",
                 f"/r/{ROOT}/s/..%2f..%2fetc", f"/r/{ROOT}/s/{REAL_SESSION}/part/v/x",
                 f"/r/{ROOT}/s/nope-000/part/v/0", "/static/../../pyproject.toml",
                 "/static/nope.css"):
        status, _, body = get(served.at(path))
        assert status == 404, path
        assert b"Traceback" not in body and b"pyproject" not in body


def test_parts_of_the_current_version_load_and_a_stale_version_is_409(served):
    status, _, body = get(served.at(f"/r/{ROOT}/s/{REAL_SESSION}"))
    assert status == 200
    version = re.search(rf"/s/{REAL_SESSION}/part/([0-9a-f]+)/", body.decode())
    assert version is not None  # the real session is longer than the page's first part
    status, _, part = get(served.at(f"/r/{ROOT}/s/{REAL_SESSION}/part/{version.group(1)}/0"))
    assert status == 200 and b'class="turn"' in part
    assert get(served.at(f"/r/{ROOT}/s/{REAL_SESSION}/part/0000000000000000/0"))[0] == 409


def test_the_packaged_assets_are_served_and_nothing_else_is(served):
    status, headers, body = get(served.at("/static/app.js"))
    assert status == 200 and headers["content-type"].startswith("text/javascript")
    assert b"fetch(" in body and b"http" not in body.replace(b"HTTP ", b"")


def test_a_search_finds_a_turn_and_links_to_its_anchor(served):
    status, _, body = get(served.at("/search?q=pwned"))
    assert status == 200
    assert f"/r/{ROOT}/s/{HOSTILE_SESSION}#t-main-1".encode() in body
    assert b"<script>" not in body


def test_the_export_route_is_a_download_of_the_self_contained_page(served):
    status, headers, body = get(served.at(f"/r/{ROOT}/s/{HOSTILE_SESSION}/export"))
    assert status == 200 and "attachment" in headers["content-disposition"]
    assert b"<style>" in body and b"&lt;script&gt;" in body and b"<script" not in body


def test_a_repositorys_list_is_reused_until_a_record_arrives_and_then_shows_it(tmp_path):
    from abcd_daemon.web.app import Viewer

    from .support import store_real

    home = make_home(tmp_path)
    store_real(home)
    viewer = Viewer(LocalSource(home))
    viewer.sessions_page(ROOT)  # the first also derives the index: not kept
    first = viewer.sessions_page(ROOT)
    assert viewer.sessions_page(ROOT) is first
    store_hostile(home)
    again = viewer.sessions_page(ROOT)
    assert again is not first and HOSTILE_SESSION[:8] in again


def test_a_long_session_list_is_paged_newest_first_with_links_between_pages(tmp_path):
    from .support import store_many

    home = make_home(tmp_path)
    store_many(home, 230, ROOT)
    s = Served(LocalSource(home))
    try:
        seen, page_no, links = [], 1, []
        path = f"/r/{ROOT}"
        while path:
            status, _, body = get(s.at(path))
            html = body.decode()
            assert status == 200
            seen.append(re.findall(rf'href="/r/{ROOT}/s/(5e55\d{{4}}[^"]*)"', html))
            nxt = re.search(r'<a rel="next" href="([^"]+)"', html)
            links.append(bool(re.search(r'<a rel="prev"', html)))
            path = nxt.group(1).replace("&amp;", "&") if nxt else ""
            page_no += 1
        assert [len(p) for p in seen] == [100, 100, 30]
        assert links == [False, True, True]  # only the first page has no way back
        flat = [sid for p in seen for sid in p]
        assert len(set(flat)) == 230
        assert flat == sorted(flat, reverse=True)  # session k started after k - 1
        assert "sessions 201–230 of 230" in html
        for bad in ("?page=4", "?page=0", "?page=x"):
            assert get(s.at(f"/r/{ROOT}{bad}"))[0] == 404, bad
    finally:
        s.stop()


class _HeldSource(LocalSource):
    """Reconstructs only once ``release`` is set (or fails with ``fail``)."""

    def __init__(self, home) -> None:
        import threading

        super().__init__(home)
        self.release = threading.Event()
        self.fail = None

    def reconstruction(self, root_sha, session_id):
        assert self.release.wait(30)
        if self.fail is not None:
            raise self.fail
        return super().reconstruction(root_sha, session_id)


def _open(served, path):
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    conn.request("GET", served.at(path)[len(served.base):])
    return conn, conn.getresponse()


def test_a_session_page_is_streamed_its_head_sent_before_the_session_is_reconstructed(tmp_path):
    home = make_home(tmp_path)
    store_real(home)
    source = _HeldSource(home)
    s = Served(source)
    try:
        conn, response = _open(s, f"/r/{ROOT}/s/{REAL_SESSION}")
        assert response.status == 200 and response.getheader("content-security-policy")
        first = response.read1(65536).decode()  # what has arrived while reconstruction waits
        assert first.startswith("<!DOCTYPE html>") and f"<title>Session {REAL_SESSION[:8]}" in first
        assert first.endswith("<main>") and 'href="/static/app.css"' in first
        source.release.set()
        streamed = first + response.read().decode()
        conn.close()
        assert streamed.endswith("</main></body></html>") and 'id="timeline"' in streamed
        status, _, again = get(s.at(f"/r/{ROOT}/s/{REAL_SESSION}"))  # the kept page, whole
        assert status == 200 and again.decode() == streamed
        assert get(s.at(f"/r/{ROOT}/s/nope-000"))[0] == 404  # decided before any byte
    finally:
        source.release.set()
        s.stop()


def test_a_failure_after_the_head_was_sent_ends_the_page_saying_what_went_wrong(tmp_path):
    from abcd_daemon.errors import AbcdError

    home = make_home(tmp_path)
    store_real(home)
    source = _HeldSource(home)
    source.fail = AbcdError("the records changed <while> reading")
    source.release.set()
    s = Served(source)
    try:
        status, _, body = get(s.at(f"/r/{ROOT}/s/{REAL_SESSION}"))
        page = body.decode()
        assert status == 200 and page.endswith("</main></body></html>")
        assert "the records changed &lt;while&gt; reading; reload the page" in page
    finally:
        s.stop()
