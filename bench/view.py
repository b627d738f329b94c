"""Benchmark: ``abcd view`` on the 55-agent 8 MB synthetic session and a 2,000-session list.

Builds, in a temporary ABCD_HOME (nothing of the user's store is touched):
- the 55-record session of ``bench/reconstruct.py`` (1 main thread + 54 sub-agents,
  ~8 MB of transcript, seeded), and
- a second repository of 2,000 small sessions (a main thread and one sub-agent each).

The index is synced once (as the daemon keeps it), then the viewer is served on
127.0.0.1 by the real stack (hypercorn's trio worker + Starlette) and measured:

  session_first_byte_ms  GET of the session page until its first byte, on a COLD page
                         cache (a fresh server per run: reconstruct + outline + render
                         of the timeline, bars and first turns all inside it); median;
  session_loaded_ms      headless Chromium (Debian's, via chromedriver) opening the
                         session page on a cold server, navigation start → load event
                         end (the timeline, bars and first turns; later turns load as
                         the reader scrolls); median;
  list_ms                GET of the 2,000-session list, warm (records and index read
                         once before; the page is reused while the records directory and
                         the index are unchanged); median;
  list_first_ms          the first GET of that list on a fresh server (every record's
                         frontmatter listed, the index queried, the page built).

With ``--daemon`` a real daemon serves that store and the viewer reads records and
reconstructions through it (``abcd_client.view_source.DaemonSource``, what ``abcd view``
uses when the daemon runs); without it, the same core runs in-process.

Targets: first byte ≤ 300 ms, loaded ≤ 2,000 ms, list ≤ 300 ms. The last line printed is
one JSON object ``{"session_first_byte_ms", "session_loaded_ms", "list_ms", ...}``.

    .venv/bin/python bench/view.py [--repeat 5] [--sessions 2000] [--daemon] [--check]
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


def first_byte(served, path: str) -> tuple[float, int]:
    """(ms until the first byte of the answer, body bytes) for one GET."""
    host, port = served.base.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    start = time.perf_counter()
    conn.request("GET", served.at(path)[len(served.base):])
    response = conn.getresponse()  # returns once the status line has arrived
    ms = (time.perf_counter() - start) * 1000
    body = response.read()
    conn.close()
    if response.status != 200:
        raise SystemExit(f"GET {path}: {response.status}")
    return ms, len(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=55)
    parser.add_argument("--daemon", action="store_true",
                        help="read through a running daemon (as abcd view does when one runs)")
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
        if args.daemon:
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
        source.refresh_index()  # derive the index once, as the daemon keeps it
        print(f"index synced in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        page = f"/r/{ROOT}/s/{SESSION}"

        firsts, sizes = [], 0
        for _ in range(args.repeat):
            served = Served(source)
            try:
                ms, sizes = first_byte(served, page)
                firsts.append(ms)
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

        served = Served(source)
        try:
            cold_list, _ = first_byte(served, f"/r/{LIST_ROOT}")
            lists = [first_byte(served, f"/r/{LIST_ROOT}")[0] for _ in range(args.repeat)]
        finally:
            served.stop()
            if daemon is not None:
                daemon.stop()

    transcript_mb = sum(len(body) for _, body in session) / 1e6
    print(f"session: {len(session)} records, {transcript_mb:.2f} MB of transcript; page "
          f"{sizes / 1e3:.0f} kB" + (f", {parts} parts left to lazy-load" if loaded else ""),
          file=sys.stderr)
    print(f"first byte (cold) ms: {[round(x) for x in firsts]}; loaded ms: "
          f"{[round(x) for x in loaded]}; list ms: first {cold_list:.0f}, then "
          f"{[round(x) for x in lists]} (pid {os.getpid()}; load {os.getloadavg()[0]:.2f})",
          file=sys.stderr)
    figures = {
        "session_first_byte_ms": round(statistics.median(firsts), 1),
        "session_loaded_ms": round(statistics.median(loaded), 1) if loaded else None,
        "list_ms": round(statistics.median(lists), 1),
        "list_first_ms": round(cold_list, 1),
        "sessions_listed": args.sessions,
        "source": "daemon" if args.daemon else "in-process",
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
