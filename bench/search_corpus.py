"""The seeded corpus ``bench/search.py`` measures: records across many sessions, made
from the line shapes of the real Claude Code fixtures with their words re-drawn.

Each session is a main thread and two sub-agents (of four types); sizes are lognormal
around ``mb / sessions``. Every line is a real fixture line (``user`` or ``assistant``
with a message: envelope, usage, tool calls and their inputs, structured tool results
as recorded) whose indexed text —
prompts, assistant text and thinking, tool results — is replaced by text of the same
length drawn from a seeded Zipf vocabulary of 50,000 made-up words, so word frequencies
look like a language (a few very common words, a long tail of rare ones) and no two
sessions share a passage. Sessions start an hour apart, so the daily report has rows.

A corpus is built once per (seed, MB, sessions) under ``--cache`` (default the temp
dir, never the repository) and reused: ``ensure_corpus`` returns its home.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import time
import uuid
from pathlib import Path

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "claude-code-log" / "real_projects"
LANE = "5ea4c0" + "0" * 34
T0 = 1_790_000_000  # 2026-09-21
AGENT_TYPES = ("Explore", "general-purpose", "Plan", "code-reviewer")
_CONS, _VOWELS = "bcdfghjklmnprstvwz", "aeiou"


def vocabulary(rng: random.Random, n: int = 50_000) -> list[str]:
    """``n`` distinct pronounceable made-up words, most frequent first."""
    words: dict[str, None] = {}
    while len(words) < n:
        syllables = rng.choice((1, 2, 2, 3, 3, 4))
        words["".join(rng.choice(_CONS) + rng.choice(_VOWELS) for _ in range(syllables))] = None
    return list(words)


class TextPool:
    """A long seeded Zipf text; ``take(n)`` is about ``n`` characters of it, whole words."""

    def __init__(self, rng: random.Random, vocab: list[str], chars: int = 24_000_000) -> None:
        weights = [1.0 / (rank + 1) ** 1.07 for rank in range(len(vocab))]
        cum = list(_accumulate(weights))
        words = rng.choices(vocab, cum_weights=cum, k=chars // 6)
        self.text = " ".join(words)
        self.rng = rng

    def take(self, n: int) -> str:
        if n <= 0:
            return ""
        n = min(n, len(self.text) // 2)
        start = self.text.find(" ", self.rng.randrange(len(self.text) - n)) + 1
        end = self.text.rfind(" ", start, start + n + 1)
        return self.text[start:end if end > start else start + n]


def _accumulate(xs):
    total = 0.0
    for x in xs:
        total += x
        yield total


def template_lines() -> list[dict]:
    out = []
    for p in sorted(FIXTURES.rglob("*.jsonl")):
        for raw in p.read_bytes().splitlines():
            try:
                v = json.loads(raw)
            except ValueError:
                continue
            if isinstance(v, dict) and v.get("type") in ("user", "assistant") and isinstance(v.get("message"), dict):
                out.append(v)
    return out


class Writer:
    """Turns template lines into new ones: fresh ids and times, re-drawn text."""

    def __init__(self, rng: random.Random, pool: TextPool, templates: list[dict]) -> None:
        self.rng, self.pool, self.templates = rng, pool, templates
        self.open_calls: list[str] = []

    def _id(self, prefix: str) -> str:
        return prefix + uuid.UUID(int=self.rng.getrandbits(128)).hex[:24]

    def _block(self, b):
        if not isinstance(b, dict):
            return b
        kind = b.get("type")
        if kind == "text":
            return {"type": "text", "text": self.pool.take(len(b.get("text") or ""))}
        if kind == "thinking":
            return dict(b, thinking=self.pool.take(len(b.get("thinking") or "")))
        if kind == "tool_use":
            call = self._id("toolu_")
            self.open_calls.append(call)
            return dict(b, id=call)
        if kind == "tool_result":
            content = b.get("content")
            size = len(content) if isinstance(content, str) else len(json.dumps(content))
            ref = self.open_calls.pop() if self.open_calls else self._id("toolu_")
            return dict(b, tool_use_id=ref, content=self.pool.take(size))
        return b

    def line(self, session: str, agent: str, when: float) -> bytes:
        v = dict(self.rng.choice(self.templates))
        v.update(sessionId=session, uuid=str(uuid.UUID(int=self.rng.getrandbits(128))),
                 timestamp=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + ".000Z")
        if agent:
            v.update(agentId=agent, isSidechain=True)
        msg = dict(v["message"])
        content = msg.get("content")
        if isinstance(content, str):
            msg["content"] = self.pool.take(len(content))
        elif isinstance(content, list):
            msg["content"] = [self._block(b) for b in content]
        if v["type"] == "assistant":
            msg["id"] = self._id("msg_")
        v["message"] = msg  # a toolUseResult stays as recorded: its bytes are not indexed
        return json.dumps(v, separators=(",", ":")).encode()

    def thread(self, session: str, agent: str, size: int, t0: float) -> bytes:
        out, n, i = [], 0, 0
        while n < size:
            line = self.line(session, agent, t0 + 2 * i)
            out.append(line)
            n += len(line) + 1
            i += 1
        return b"\n".join(out) + b"\n"


def store(lane: Lane, session: str, body: bytes, agent: str, agent_type: str, ns: int) -> int:
    rec = Record(session_id=session, root_commit=lane.root_sha, source_sha256=hashlib.sha256(body).hexdigest(),
                 captured_at=format_rfc3339_ns(ns), agent_id=agent, agent_type=agent_type)
    data = format_record(rec, body)
    (lane.records / record_filename(rec)).write_bytes(data)
    return len(data)


def writer(seed: int) -> Writer:
    rng = random.Random(seed)
    return Writer(rng, TextPool(rng, vocabulary(rng)), template_lines())


def ensure_corpus(seed: int, mb: float, sessions: int, cache: Path, say=print) -> tuple[Home, dict]:
    """The corpus's home (built now unless ``cache`` holds it) and what it holds."""
    base = cache / f"abcd-search-corpus-{seed}-{mb:g}-{sessions}"
    done = base / "corpus.json"
    home = Home(base / "home")
    if done.exists():
        return home, json.loads(done.read_text())
    os.makedirs(home.root, mode=0o700, exist_ok=True)
    lane = Lane(home, LANE).ensure("records")
    w = writer(seed)
    rng = w.rng
    mean = mb * 1e6 / sessions
    sigma = 0.8
    total, records, started = 0, 0, time.monotonic()
    for s in range(sessions):
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        size = int(mean * math.exp(rng.gauss(-sigma * sigma / 2, sigma)))
        t0 = T0 + s * 3600
        total += store(lane, session, w.thread(session, "", size * 2 // 3, t0), "", "", int(t0 * 1e9))
        for a in range(2):
            agent = f"a{rng.getrandbits(64):016x}"
            body = w.thread(session, agent, size // 6, t0 + 60 + a)
            total += store(lane, session, body, agent, rng.choice(AGENT_TYPES), int(t0 * 1e9) + a + 1)
        records += 3
        if s % 200 == 199:
            say(f"corpus: {s + 1}/{sessions} sessions, {total / 1e6:.0f} MB, {time.monotonic() - started:.0f} s")
    info = {"seed": seed, "mb": round(total / 1e6, 1), "sessions": sessions, "records": records, "lane": LANE}
    done.write_text(json.dumps(info))
    return home, info
