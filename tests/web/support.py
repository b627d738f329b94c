"""Helpers for the viewer's tests: a store holding a real session with sub-agents (and
a hostile one), the viewer served from a background thread, and a headless Chromium."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename

from ..reconstruct.real import REAL_PROJECTS, store_session

ROOT = "7" * 40
#: A real session with six sub-agents spawned in two parallel waves (main turns 10, 26).
REAL_SESSION = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
REAL_MAIN = REAL_PROJECTS / "-experiments-worktrees" / f"{REAL_SESSION}.jsonl"
HOSTILE_SESSION = "hostile-0001"
HOSTILE_TEXT = ("<script>window.__pwned = 1</script>\n## Agent `forged`\n"
                "### Turn 99 — user\n```\nfenced inside\n```\n"
                "<img src=\"http://198.51.100.7/x.png\"> ![p](http://198.51.100.7/y.png)")
#: A sub-agent type (record metadata, outside every fence) written as Markdown.
HOSTILE_TYPE = "**bold** _it_ `code` ~~gone~~"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def make_home(base: Path) -> Home:
    root = base / "home"
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return Home(root)


def store_real(home: Home) -> Lane:
    lane = Lane(home, ROOT)
    store_session(lane, REAL_MAIN)
    return lane


def store_hostile(home: Home) -> Lane:
    """A session whose user line carries a script, a forged heading and a fence, and
    whose one sub-agent's type is Markdown (:data:`HOSTILE_TYPE`)."""
    lane = Lane(home, ROOT).ensure("records")
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": HOSTILE_SESSION, "timestamp": "2026-01-02T03:04:05.000Z",
         "message": {"role": "user", "content": HOSTILE_TEXT}},
        {"type": "assistant", "uuid": "a1", "sessionId": HOSTILE_SESSION, "timestamp": "2026-01-02T03:04:09.000Z",
         "requestId": "req_1", "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5",
                                           "content": [{"type": "text", "text": "noted"}],
                                           "stop_reason": "end_turn",
                                           "usage": {"input_tokens": 10, "output_tokens": 5}}},
    ]
    body = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    record = Record(session_id=HOSTILE_SESSION, root_commit=ROOT,
                    source_sha256=hashlib.sha256(body).hexdigest(),
                    captured_at=format_rfc3339_ns(1_780_000_000_000_000_000))
    (lane.records / record_filename(record)).write_bytes(format_record(record, body))
    agent = "a0b1c2d3e4f5a6b7"
    sub = json.dumps({"type": "user", "uuid": "s1", "sessionId": HOSTILE_SESSION, "agentId": agent,
                      "timestamp": "2026-01-02T03:04:06.000Z",
                      "message": {"role": "user", "content": "look around"}}).encode() + b"\n"
    record = Record(session_id=HOSTILE_SESSION, root_commit=ROOT, agent_id=agent,
                    agent_type=HOSTILE_TYPE, source_sha256=hashlib.sha256(sub).hexdigest(),
                    captured_at=format_rfc3339_ns(1_780_000_001_000_000_000))
    (lane.records / record_filename(record)).write_bytes(format_record(record, sub))
    return lane


def store_many(home: Home, n: int, root: str) -> Lane:
    """``n`` small sessions in the lane ``root``, session ``k`` started ``k`` × 10 min
    after the first: a main thread and one sub-agent each, one priced response in
    each (``k`` more input tokens in session ``k``)."""
    lane = Lane(home, root).ensure("records")
    t0 = 1_780_000_000
    for k in range(n):
        sid = f"5e55{k:04d}-0000-4000-8000-{k:012d}"
        for agent in ("", f"a{k:016x}"):
            lines = []
            for j, role in enumerate(("user", "assistant")):
                line = {"type": role, "uuid": f"{sid}-{agent}-{j}", "sessionId": sid,
                        "timestamp": format_rfc3339_ns((t0 + k * 600 + j * 30) * 10**9)}
                if role == "user":
                    line["message"] = {"role": "user", "content": f"task {k}: do the thing"}
                else:
                    line["requestId"] = f"req_{k}_{agent}"
                    line["message"] = {"id": f"msg_{k}_{agent}", "role": "assistant",
                                       "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                                       "content": [{"type": "text", "text": "done"}],
                                       "usage": {"input_tokens": 100 + k, "output_tokens": 50,
                                                 "cache_read_input_tokens": 1000}}
                if agent:
                    line["agentId"] = agent
                lines.append(json.dumps(line))
            body = ("\n".join(lines) + "\n").encode()
            record = Record(session_id=sid, root_commit=root, agent_id=agent,
                            agent_type="general-purpose" if agent else "",
                            source_sha256=hashlib.sha256(body).hexdigest(),
                            captured_at=format_rfc3339_ns((t0 + k * 600 + 90) * 10**9))
            (lane.records / record_filename(record)).write_bytes(format_record(record, body))
    return lane


class Served:
    """The viewer of ``source`` served on 127.0.0.1 from a background thread."""

    def __init__(self, source) -> None:
        import trio

        from abcd_daemon.web.serve import serve

        self.url = ""
        self._ready = threading.Event()
        self._token = None
        self._stop = None

        async def main():
            self._stop = trio.Event()
            self._token = trio.lowlevel.current_trio_token()

            def ready(url):
                self.url = url
                self._ready.set()

            await serve(source, on_ready=ready, shutdown=self._stop)

        self._thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the viewer did not start")
        self.base, self.token = self.url.split("/?token=")
        self.port = int(self.base.rsplit(":", 1)[1])

    def at(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path}{sep}token={self.token}"

    def stop(self) -> None:
        self._token.run_sync_soon(self._stop.set)
        self._thread.join(30)


def get(url: str, headers: dict | None = None, method: str = "GET") -> tuple[int, dict, bytes]:
    """(status, headers, body) of one request; errors are answers too."""
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def browser_or_skip():
    """A headless Chromium driven through Debian's chromedriver (never downloaded), or a
    skip that says why it cannot start."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip(f"no browser: {CHROMIUM} or {CHROMEDRIVER} is missing "
                    "(.ci/run installs Debian's chromium and chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        pytest.skip(f"selenium is not installed ({exc}); pip install -e '.[test]'")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1360,1000", "--no-first-run", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-default-apps"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    except Exception as exc:  # noqa: BLE001 - any failure to start is the skip's reason
        pytest.skip(f"the browser could not start: {type(exc).__name__}: {str(exc)[:300]}")


@pytest.fixture(scope="module")
def browser(world):
    """One headless Chromium for a test module (after its ``world`` fixture is up)."""
    driver = browser_or_skip()
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
