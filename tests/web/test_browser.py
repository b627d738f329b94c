"""The viewer in a real browser (headless Chromium from Debian, driven by selenium).

One browser and one server for the whole module (starting Chromium costs seconds).
Where the browser cannot start, every test here skips and says why; CI installs it.
"""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

import pytest

from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.web.source import LocalSource

from .support import (HOSTILE_SESSION, HOSTILE_TYPE, REAL_SESSION, ROOT, Served, browser, get,  # noqa: F401
                      make_home, store_hostile, store_real)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    home = make_home(tmp_path_factory.mktemp("view"))
    lane = store_real(home)
    store_hostile(home)
    served = Served(LocalSource(home))
    telemetry = reconstruct(lane, ReconstructOptions(session_id=REAL_SESSION), now_ns=0).telemetry
    yield served, telemetry
    served.stop()


def test_a_real_session_shows_one_lane_per_thread_in_document_order(world, browser):
    served, telemetry = world
    browser.get(served.at(f"/r/{ROOT}/s/{REAL_SESSION}"))
    lanes = browser.find_elements("css selector", "svg.timeline g.lane")
    shown = [lane.get_attribute("data-agent") for lane in lanes]
    expected = ["main"] + [a.agent_id for a in telemetry.agents if not a.is_main_thread]
    assert shown == expected and len(shown) == 7
    sections = [s.get_attribute("data-key") for s in
                browser.find_elements("css selector", "section.thread")]
    assert sections == expected  # the lanes are in the order the sections are
    bars = browser.find_elements("css selector", "svg.timeline g.lane rect.bar")
    assert len(bars) == 7 and all(b.size["width"] > 0 for b in bars)


def test_clicking_a_lane_scrolls_to_its_agent_section(world, browser):
    served, telemetry = world
    browser.get(served.at(f"/r/{ROOT}/s/{REAL_SESSION}"))
    last = [a.agent_id for a in telemetry.agents if not a.is_main_thread][-1]
    bar = browser.find_element("css selector", f'svg.timeline g.lane[data-agent="{last}"] rect.bar')
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", bar)
    before = browser.execute_script("return window.scrollY")
    bar.click()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        top = browser.execute_script(
            "return document.getElementById(arguments[0]).getBoundingClientRect().top",
            f"agent-{last}")
        if abs(top) < 40:
            break
        time.sleep(0.1)
    assert abs(top) < 40, (top, browser.execute_script("return [location.href, window.scrollY]"), before)
    assert browser.execute_script("return location.hash") == f"#agent-{last}"
    assert browser.execute_script("return window.scrollY") > before + 500


def test_the_rest_of_a_long_session_loads_as_the_reader_scrolls(world, browser):
    served, _ = world
    browser.get(served.at(f"/r/{ROOT}/s/{REAL_SESSION}"))
    count = "return document.querySelectorAll(arguments[0]).length"
    assert browser.execute_script(count, ".part[data-src]") > 0  # not all of it came at once
    deadline = time.monotonic() + 30
    while browser.execute_script(count, ".part") and time.monotonic() < deadline:
        browser.execute_script("window.scrollBy(0, window.innerHeight)")  # a reader, paging
        time.sleep(0.05)
    assert browser.execute_script(count, ".part") == 0
    status, _, whole = get(served.at(f"/r/{ROOT}/s/{REAL_SESSION}/export"))
    assert status == 200
    assert browser.execute_script(count, "div.turn") == whole.count(b'<div class="turn"')


def test_a_script_a_forged_heading_and_a_fence_in_a_transcript_render_as_text(world, browser):
    served, _ = world
    browser.get(served.at(f"/r/{ROOT}/s/{HOSTILE_SESSION}"))
    assert browser.execute_script("return window.__pwned") is None
    turn = browser.find_element("id", "t-main-1")
    text = turn.find_element("css selector", "pre").text
    assert "<script>window.__pwned = 1</script>" in text
    assert "## Agent `forged`" in text and "```" in text
    assert not browser.find_elements("id", "agent-forged")
    headings = [h.text for h in turn.find_elements("css selector", "h1, h2, h3, h4")]
    assert headings == ["Turn 1 — user · 2026-01-02T03:04:05Z"]
    assert not browser.find_elements("css selector", "main img, main script, main a[href^='http']")


def test_a_sub_agent_type_written_as_markdown_is_shown_as_the_text_it_is(world, browser):
    served, _ = world
    browser.get(served.at(f"/r/{ROOT}/s/{HOSTILE_SESSION}"))
    section = browser.find_element("css selector", "section.thread:not([data-key=main])")
    assert HOSTILE_TYPE in section.text  # its provenance line
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    table = browser.find_element("css selector", "#timeline-table table")
    assert HOSTILE_TYPE in table.text
    marked = [el.text for el in browser.find_elements("css selector", "main em, main strong, main del, main code")
              if el.text.strip() in ("bold", "it", "code", "gone")]
    assert marked == []


def test_the_pages_make_no_request_outside_the_server(world, browser):
    served, _ = world
    browser.get_log("performance")  # forget earlier tests' requests
    for path in ("/", f"/r/{ROOT}", f"/r/{ROOT}/s/{REAL_SESSION}", f"/r/{ROOT}/s/{HOSTILE_SESSION}"):
        browser.get(served.at(path))
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    time.sleep(0.5)
    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    assert urls, "the performance log recorded no request at all"
    outside = [u for u in urls if not u.startswith("data:")
               and urlsplit(u).netloc != urlsplit(served.base).netloc]
    assert outside == []


def test_a_request_without_the_token_is_refused(world):
    served, _ = world
    status, _, body = get(f"{served.base}/r/{ROOT}/s/{REAL_SESSION}")
    assert status == 403 and REAL_SESSION.encode() not in body


def test_a_screenshot_of_the_timeline_is_not_blank(world, browser):
    served, _ = world
    browser.get(served.at(f"/r/{ROOT}/s/{REAL_SESSION}"))
    png = browser.find_element("css selector", "svg.timeline").screenshot_as_png
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    colours = _colours(png)
    assert len(colours) > 8, colours  # lanes, bars, text: far more than a blank fill


def _colours(png: bytes) -> set:
    """The distinct RGB(A) pixels of a PNG (stdlib only: zlib + the filter bytes)."""
    import struct
    import zlib

    pos, idat, width = 8, b"", 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        data = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", data[:10])
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    channels = {2: 3, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    stride = width * channels
    seen, prev = set(), bytearray(stride)
    i = 0
    for _ in range(height):
        f = raw[i]
        row = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = row[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if f == 1:
                row[x] = (row[x] + a) & 255
            elif f == 2:
                row[x] = (row[x] + b) & 255
            elif f == 3:
                row[x] = (row[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, channels * 7):
            seen.add(bytes(row[x:x + 3]))
        prev = row
    return seen
