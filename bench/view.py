"""Benchmark: ``abcd view`` on the 55-agent 8 MB synthetic session and a 2,000-session list.

Builds, in a temporary ABCD_HOME (nothing of the user's store is touched):
- the 55-record session of ``bench/reconstruct.py`` (1 main thread + 54 sub-agents,
  ~8 MB of transcript, seeded), and
- a second repository of 2,000 small sessions (a main thread and one sub-agent each).

A real daemon serves that store (as when ``abcd view`` runs beside it) and its index
is brought level once, off the clock (a running daemon keeps it so); then the viewer
is served on 127.0.0.1 by the real stack (hypercorn's trio worker + Starlette),
reading through the daemon (``abcd_client.view_source.DaemonSource``, what
``abcd view`` uses), and measured — each figure the median of ``--repeat`` runs:

  session_first_byte_ms  GET of the session page until its first byte, on a COLD page
                         cache (a fresh viewer per run; the session's records listed
                         through the daemon so an unknown one is 404; then the head);
  session_pictures_ms    the same GET until the timeline and the bars have arrived
                         (the page is streamed: its head goes out before the session
                         is reconstructed, the pictures as soon as they are drawn);
  session_whole_ms       the same GET until its last byte;
  session_loaded_ms      headless Chromium (Debian's, via chromedriver) opening the
                         session page on a cold server, navigation start → load event
                         end (the timeline, bars and first turns; later turns load as
                         the reader scrolls); median;
  list_ms                the first GET of the 2,000-session list on a fresh server:
                         UNCACHED (no page of it built before in that viewer; the
                         daemon answers the first page of 100 from its index);
  list_warm_ms           later GETs of it on the same server (the page is reused while
                         the records directory and the index are unchanged).

With ``--in-process`` no daemon runs and the same core reads the store in the
viewer's process (its index synced once before, off the clock).

Targets: first byte ≤ 300 ms, loaded ≤ 2,000 ms, list ≤ 300 ms. The last line printed is
one JSON object ``{"session_first_byte_ms", "session_loaded_ms", "list_ms", ...}``.

    .venv/bin/python bench/view.py [--repeat 5] [--sessions 2000] [--in-process] [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import emit_json  # noqa: E402
from bench.reconstruct import ROOT, SESSION, build, store  # noqa: E402
from tests.web.support import store_many  # noqa: E402

LIST_ROOT = "6" * 40


#: The end of the session page's pictures (the timeline and the bars).
PICTURES_END = b"</svg></div></section>"


def first_byte(served, path: str) -> tuple[float, float, float, int]:
    """(ms until the first byte of the answer, until the pictures' end has arrived (0
    when the page has none), until its last byte, body bytes) for one GET."""
    host, port = served.base.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    start = time.perf_counter()
    conn.request("GET", served.at(path)[len(served.base):])
    response = conn.getresponse()  # returns once the status line has arrived
    ms = (time.perf_counter() - start) * 1000
    body, pictures = b"", 0.0
    while chunk := response.read1(1 << 16):
        body += chunk
        if not pictures and PICTURES_END in body[-len(chunk) - len(PICTURES_END):]:
            pictures = (time.perf_counter() - start) * 1000
    whole = (time.perf_counter() - start) * 1000
    conn.close()
    if response.status != 200:
        raise SystemExit(f"GET {path}: {response.status}")
    return ms, pictures, whole, len(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=55)
    parser.add_argument("--in-process", action="store_true",
                        help="no daemon: the viewer reads the store itself")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()

    from abcd_daemon.paths import Home
    from abcd_daemon.web.source import LocalSource
    from tests.web.support import Served, browser_or_skip

    with tempfile.TemporaryDirectory(prefix="abcd-bench-view-") as tmp:
        home = Home(Path(tmp) / "home")
        home.root.mkdir(mode=0o700, parents=True)
        session = build(args.seed, 8.0)
        store(home, session)
        store_many(home, args.sessions, LIST_ROOT)
        daemon = None
        if not args.in_process:
            from abcd_client.view_source import DaemonSource
            from tests.daemon.procs import DaemonProc, env_for

            env = env_for(Path(tmp))
            os.environ.update({k: env[k] for k in ("ABCD_HOME", "ABCD_SOCKET", "TMPDIR")})
            os.environ.pop("ABCD_LOCAL", None)
            daemon = DaemonProc(env, Path(tmp) / "daemon.log").wait_ready(60)
            source = DaemonSource(home)
        else:
            source = LocalSource(home)
        t = time.perf_counter()
        if daemon is None:
            source.refresh_index()  # derive the index once, off the clock
        for root in (ROOT, LIST_ROOT):  # the daemon's keeper brings these lanes level
            source.session_page(root, 0, 1)
        print(f"index synced in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        page = f"/r/{ROOT}/s/{SESSION}"

        firsts, pictures, wholes, sizes = [], [], [], 0
        for _ in range(args.repeat):
            served = Served(source)
            try:
                ms, drawn, whole, sizes = first_byte(served, page)
                firsts.append(ms)
                pictures.append(drawn)
                wholes.append(whole)
            finally:
                served.stop()

        loaded = []
        try:
            import pytest  # browser_or_skip reports a missing browser as a pytest skip

            browser = browser_or_skip()
        except pytest.skip.Exception as exc:
            browser = None
            print(f"no browser, session_loaded_ms not measured: {exc}", file=sys.stderr)
        if browser is not None:
            try:
                for _ in range(args.repeat):
                    served = Served(source)
                    try:
                        browser.get(served.at("/static/icon.svg"))  # the cookie, off the clock
                        browser.get(served.at(page))
                        loaded.append(browser.execute_script(
                            "var n = performance.getEntriesByType('navigation')[0];"
                            "return n.loadEventEnd - n.startTime;"))
                        parts = browser.execute_script(
                            "return document.querySelectorAll('.part[data-src]').length")
                    finally:
                        served.stop()
            finally:
                browser.quit()

        lists, warm = [], []
        try:
            for _ in range(args.repeat):
                served = Served(source)
                try:
                    lists.append(first_byte(served, f"/r/{LIST_ROOT}")[0])
                    warm.append(first_byte(served, f"/r/{LIST_ROOT}")[0])
                finally:
                    served.stop()
        finally:
            if daemon is not None:
                daemon.stop()

    transcript_mb = sum(len(body) for _, body in session) / 1e6
    print(f"session: {len(session)} records, {transcript_mb:.2f} MB of transcript; page "
          f"{sizes / 1e3:.0f} kB" + (f", {parts} parts left to lazy-load" if loaded else ""),
          file=sys.stderr)
    print(f"first byte (cold) ms: {[round(x) for x in firsts]}; pictures ms: "
          f"{[round(x) for x in pictures]}; whole page ms: "
          f"{[round(x) for x in wholes]}; loaded ms: {[round(x) for x in loaded]}; list ms: "
          f"uncached {[round(x) for x in lists]}, warm {[round(x) for x in warm]} "
          f"(pid {os.getpid()}; load {os.getloadavg()[0]:.2f})", file=sys.stderr)
    figures = {
        "session_first_byte_ms": round(statistics.median(firsts), 1),
        "session_loaded_ms": round(statistics.median(loaded), 1) if loaded else None,
        "list_ms": round(statistics.median(lists), 1),
        "session_pictures_ms": round(statistics.median(pictures), 1),
        "session_whole_ms": round(statistics.median(wholes), 1),
        "list_warm_ms": round(statistics.median(warm), 1),
        "sessions_listed": args.sessions,
        "source": "in-process" if args.in_process else "daemon",
        "transcript_mb": round(transcript_mb, 2),
        "page_kb": round(sizes / 1e3, 1),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }
    missed = [name for name, ok in (
        ("first byte <= 300 ms", figures["session_first_byte_ms"] <= 300),
        ("loaded <= 2000 ms", loaded and figures["session_loaded_ms"] <= 2000),
        ("list <= 300 ms", figures["list_ms"] <= 300)) if not ok]
    if missed:
        print("MISSED: " + ", ".join(missed), file=sys.stderr)
    emit_json(figures)
    if args.check and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
