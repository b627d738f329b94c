"""Shared helpers for the benchmarks: an isolated environment, a real git repository,
seeded Claude-Code-shaped transcripts, and small statistics.

Nothing here touches the user's store: :func:`isolated_env` points ``ABCD_HOME``,
``ABCD_SOCKET`` and ``TMPDIR`` into a fresh temporary directory and the scripts set
those before importing anything from ``abcd_daemon``.

Transcripts follow the line shapes of ``tests/fixtures/claude-code-log/real_projects``:
an envelope (``parentUuid``, ``isSidechain``, ``agentId``, ``sessionId``, ``cwd``,
``uuid``, ``timestamp``, ``version``, ``gitBranch``) around ``user`` / ``assistant``
messages whose ``content`` holds ``text``, ``thinking`` (with a base64 signature),
``tool_use`` and ``tool_result`` blocks, ``usage`` on assistant lines, plus the odd
``attachment`` / ``system`` / ``file-history-snapshot`` line. Tool results carry most
of the bytes (file reads, command output), and a sprinkling of things redaction must
find: GitHub / Anthropic / AWS tokens, e-mail addresses, home paths (the caller's and
another user's), IPv4 addresses, the repository's git identity.
"""

from __future__ import annotations

import base64
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid as uuidlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from abcd_daemon.scanner.values import base62_checksum  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KB = 1000
MB = 1000 * 1000
MIB = 1 << 20

#: The repository identity written into the bench repo (and so into the scanner).
GIT_NAME = "Bench Person"
GIT_EMAIL = "bench.person@bench-corp.test"

# --------------------------------------------------------------------------- environment


def isolated_env(prefix: str, parent: str | None = None) -> tuple[Path, dict]:
    """A fresh base directory (under ``parent``, default the temp dir) and an
    environment whose ABCD_HOME / ABCD_SOCKET / TMPDIR / CLAUDE_CONFIG_DIR live inside it
    (XDG_RUNTIME_DIR removed, so nothing falls back to the user's; a bench daemon follows
    ``base/claude/projects``, never the user's harness store)."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    (base / "tmp").mkdir()
    (base / "run").mkdir(mode=0o700)
    env = dict(os.environ)
    env.pop("XDG_RUNTIME_DIR", None)
    env.update(ABCD_HOME=str(base / "home"), ABCD_SOCKET=str(base / "run" / "daemon.sock"),
               TMPDIR=str(base / "tmp"), CLAUDE_CONFIG_DIR=str(base / "claude"))
    return base, env


def apply_env(env: dict) -> None:
    """Make ``env``'s abcd variables this process's own (before importing abcd_daemon)."""
    os.environ.pop("XDG_RUNTIME_DIR", None)
    for key in ("ABCD_HOME", "ABCD_SOCKET", "TMPDIR", "CLAUDE_CONFIG_DIR"):
        os.environ[key] = env[key]
    tempfile.tempdir = None  # re-read TMPDIR


def cleanup(base: Path) -> None:
    shutil.rmtree(base, ignore_errors=True)


def make_repo(path: Path) -> str:
    """A real git repository with one commit and a repo-local identity; its root SHA."""
    path.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME=GIT_NAME,
               GIT_AUTHOR_EMAIL=GIT_EMAIL, GIT_COMMITTER_NAME=GIT_NAME,
               GIT_COMMITTER_EMAIL=GIT_EMAIL)

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=path, env=env, check=True,
                              capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("config", "user.name", GIT_NAME)
    git("config", "user.email", GIT_EMAIL)
    (path / "README").write_text("bench\n")
    git("add", "README")
    git("commit", "-q", "-m", "root")
    return git("rev-list", "--max-parents=0", "HEAD")


# --------------------------------------------------------------------------- statistics


def median(xs) -> float:
    return statistics.median(xs)


def percentile(xs, p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty sequence."""
    s = sorted(xs)
    k = max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))
    return s[k]


def lognormal_sizes(rng: random.Random, n: int, *, median_bytes: float, p99_bytes: float,
                    lo: int = 2 * KB, hi: int = 16 * MB) -> list[int]:
    """``n`` sizes from a log-normal with the given median and 99th percentile, clipped
    to [lo, hi]. The largest draw is pinned to p99 when ``n`` is small, so every run
    contains a tail transcript (the case that dominates redaction time)."""
    sigma = math.log(p99_bytes / median_bytes) / 2.3263478740408408  # z(0.99)
    sizes = [int(min(hi, max(lo, rng.lognormvariate(math.log(median_bytes), sigma))))
             for _ in range(n)]
    if n and max(sizes) < p99_bytes:
        sizes[sizes.index(max(sizes))] = int(p99_bytes)
    return sizes


def table(rows: list[tuple], headers: tuple) -> str:
    """A plain fixed-width table."""
    cells = [tuple(str(c) for c in headers)] + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    fmt = lambda r: "  ".join(c.rjust(w) if i else c.ljust(w)  # noqa: E731
                              for i, (c, w) in enumerate(zip(r, widths)))
    lines = [fmt(cells[0]), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in cells[1:]]
    return "\n".join(lines)


def check(condition: bool, message: str) -> None:
    """A benchmark that measured the wrong thing must not print a number."""
    if not condition:
        raise SystemExit(f"benchmark invalid: {message}")


def emit_json(obj: dict) -> None:
    """The machine-readable result: exactly one JSON object on the LAST line of stdout."""
    sys.stdout.flush()
    sys.stdout.write(json.dumps(obj, sort_keys=False) + "\n")
    sys.stdout.flush()


# --------------------------------------------------------------------------- transcripts

_WORDS = (
    "the a of to in and is for that with on as this it be are by from or file function "
    "return value test error config import class def self none true false list dict path "
    "read write update build check handle request response client server daemon queue "
    "drain stage record lane spool session agent hook transcript commit branch merge "
    "module package result output input data bytes string line token cache limit budget"
).split()
_TOOLS = ("Read", "Bash", "Grep", "Edit", "Glob", "Write", "Task")
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_USERS = ("alice", "bob", "carol", "dmitri", "eun-ji")
_DOMAINS = ("acme-widgets.io", "example-corp.com", "mail.contoso.net")


class TranscriptMaker:
    """Seeded generator of Claude-Code-shaped JSONL transcripts of a target size.

    ``secret_rate`` is the probability that a tool result carries one planted
    secret or identity value (so redaction has real, but not pathological, work)."""

    def __init__(self, seed: int, *, cwd: str, home: str, secret_rate: float = 0.08) -> None:
        self.rng = random.Random(seed)
        self.cwd = cwd
        self.home = home.rstrip("/")
        self.secret_rate = secret_rate
        self._code = self._code_lines(3000)
        self.planted = 0

    # -- building blocks -------------------------------------------------------
    def _id(self, n: int) -> str:
        return "".join(self.rng.choices(_ALNUM, k=n))

    def _uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def _sentence(self, lo: int = 6, hi: int = 30) -> str:
        words = self.rng.choices(_WORDS, k=self.rng.randint(lo, hi))
        return " ".join(words).capitalize() + "."

    def _code_lines(self, n: int) -> list[str]:
        r = self.rng
        shapes = (
            lambda: f"    {r.choice(_WORDS)}_{r.choice(_WORDS)} = {r.choice(_WORDS)}({r.choice(_WORDS)}, {r.randint(0, 999)})",
            lambda: f"def {r.choice(_WORDS)}_{r.choice(_WORDS)}(self, {r.choice(_WORDS)}: str) -> {r.choice(('int', 'bytes', 'None'))}:",
            lambda: f"        if {r.choice(_WORDS)} is not None and len({r.choice(_WORDS)}) > {r.randint(1, 64)}:",
            lambda: f"        # {self._sentence(4, 12)}",
            lambda: f"{r.choice(('src', 'lib', 'tests'))}/{r.choice(_WORDS)}/{r.choice(_WORDS)}.py:{r.randint(1, 900)}: {self._sentence(3, 9)}",
            lambda: f"2026-04-18T13:{r.randint(10, 59)}:{r.randint(10, 59)}Z INFO {r.choice(_WORDS)}: {self._sentence(3, 10)}",
            lambda: "",
        )
        return [r.choice(shapes)() for _ in range(n)]

    def _block_text(self, nbytes: int) -> str:
        """Code / log text of about ``nbytes``, maybe with one planted finding."""
        out, size = [], 0
        start = self.rng.randrange(len(self._code))
        i = start
        while size < nbytes:
            line = self._code[i % len(self._code)]
            out.append(line)
            size += len(line) + 1
            i += 1 + (self.rng.random() < 0.1) * self.rng.randrange(50)
        if self.rng.random() < self.secret_rate:
            out.insert(self.rng.randrange(len(out) + 1), self._planted())
        return "\n".join(out)

    def _planted(self) -> str:
        """One line carrying something redaction must find."""
        r = self.rng
        self.planted += 1
        kind = r.randrange(9)
        if kind == 0:
            body = self._id(30)
            return f'export GITHUB_TOKEN=ghp_{body}{base62_checksum(body.encode()).decode()}'
        if kind == 1:
            return f'ANTHROPIC_API_KEY="sk-ant-api03-{self._id(80)}"'
        if kind == 2:
            return f"aws_access_key_id = AKIA{''.join(r.choices('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', k=16))}"
        if kind == 3:
            return f"Author: {r.choice(_USERS)} <{r.choice(_USERS)}.{r.choice(_WORDS)}@{r.choice(_DOMAINS)}>"
        if kind == 4:
            return f"  File \"{self.home}/src/{r.choice(_WORDS)}/{r.choice(_WORDS)}.py\", line {r.randint(1, 500)}"
        if kind == 5:
            return f"/Users/{r.choice(_USERS)}/work/{r.choice(_WORDS)}/{r.choice(_WORDS)}.ts:{r.randint(1, 99)}"
        if kind == 6:
            return f"connecting to 10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}:5432 ..."
        if kind == 7:
            return f"commit {self._id(40).lower()}\nAuthor: {GIT_NAME} <{GIT_EMAIL}>"
        return f"Authorization: Bearer xoxb-{r.randint(10**11, 10**12)}-{self._id(24)}"

    # -- lines -----------------------------------------------------------------
    def _envelope(self, kind: str, message: dict | None, session: str, agent: str,
                  parent: str | None, **extra) -> dict:
        line = {"parentUuid": parent, "isSidechain": bool(agent)}
        if agent:
            line["agentId"] = agent
        if message is not None:
            line["message"] = message
        line.update(extra)
        line.update(type=kind, uuid=self._uuid(),
                    timestamp=f"2026-04-18T13:{self.rng.randint(10, 59)}:{self.rng.randint(10, 59)}."
                              f"{self.rng.randint(100, 999)}Z",
                    userType="external", entrypoint="cli", cwd=self.cwd, sessionId=session,
                    version="2.1.114", gitBranch="master")
        return line

    def _usage(self) -> dict:
        r = self.rng
        return {"input_tokens": r.randint(1, 9), "cache_creation_input_tokens": r.randint(0, 30000),
                "cache_read_input_tokens": r.randint(0, 90000), "output_tokens": r.randint(1, 3000),
                "service_tier": "standard",
                "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                   "ephemeral_1h_input_tokens": r.randint(0, 30000)}}

    def _assistant(self, block: dict, session: str, agent: str, parent: str | None) -> dict:
        message = {"model": "claude-opus-4-7", "id": f"msg_01{self._id(22)}", "type": "message",
                   "role": "assistant", "content": [block], "stop_reason": "tool_use",
                   "stop_sequence": None, "usage": self._usage()}
        return self._envelope("assistant", message, session, agent, parent,
                              requestId=f"req_011C{self._id(18)}")

    def _turn(self, session: str, agent: str, parent: str | None) -> list[dict]:
        """One assistant step: maybe thinking, maybe text, a tool call and its result."""
        r = self.rng
        lines = []
        if r.random() < 0.3:
            sig = base64.b64encode(r.randbytes(r.randint(300, 2400))).decode()
            lines.append(self._assistant({"type": "thinking", "thinking": "", "signature": sig},
                                         session, agent, parent))
            parent = lines[-1]["uuid"]
        if r.random() < 0.4:
            lines.append(self._assistant({"type": "text", "text": self._sentence(10, 60)},
                                         session, agent, parent))
            parent = lines[-1]["uuid"]
        tool, tool_id = r.choice(_TOOLS), f"toolu_01{self._id(22)}"
        tool_input = {"file_path": f"{self.cwd}/src/{r.choice(_WORDS)}/{r.choice(_WORDS)}.py"} \
            if tool in ("Read", "Edit", "Write") else {"command": f"{r.choice(_WORDS)} --{r.choice(_WORDS)}",
                                                       "description": self._sentence(3, 8)}
        lines.append(self._assistant({"type": "tool_use", "id": tool_id, "name": tool,
                                      "input": tool_input, "caller": {"type": "direct"}},
                                     session, agent, parent))
        size = int(min(120 * KB, r.lognormvariate(math.log(1500), 1.3)))
        result = {"type": "tool_result", "tool_use_id": tool_id, "content": self._block_text(size)}
        lines.append(self._envelope("user", {"role": "user", "content": [result]}, session, agent,
                                    lines[-1]["uuid"],
                                    sourceToolAssistantUUID=lines[-1]["uuid"]))
        return lines

    def _extra(self, session: str, agent: str, parent: str | None) -> dict:
        r = self.rng
        kind = r.randrange(3)
        if kind == 0:
            return {"type": "file-history-snapshot", "messageId": self._uuid(),
                    "snapshot": {"messageId": self._uuid(), "trackedFileBackups": {},
                                 "timestamp": "2026-04-18T13:18:42.474Z"}, "isSnapshotUpdate": False}
        if kind == 1:
            return self._envelope("system", None, session, agent, parent, subtype="stop_hook_summary",
                                  hookCount=1, hookErrors=[], preventedContinuation=False,
                                  level="suggestion")
        return self._envelope("attachment", None, session, agent, parent,
                              attachment={"type": "hook_success", "hookName": "SessionStart:startup",
                                          "content": "", "stdout": self._sentence(), "exitCode": 0})

    def transcript(self, nbytes: int, *, session: str, agent: str = "") -> bytes:
        """A complete transcript of about ``nbytes`` (ends in a newline, every line JSON)."""
        prompt = self._sentence(20, 120)
        first = self._envelope("user", {"role": "user", "content": prompt}, session, agent, None,
                               promptId=self._uuid())
        out = [json.dumps(first, separators=(",", ":"))]
        size, parent = len(out[0]) + 1, first["uuid"]
        while size < nbytes:
            lines = self._turn(session, agent, parent)
            if self.rng.random() < 0.08:
                lines.append(self._extra(session, agent, lines[-1]["uuid"]))
            for line in lines:
                text = json.dumps(line, separators=(",", ":"))
                out.append(text)
                size += len(text) + 1
            parent = lines[-1].get("uuid", parent)
        return ("\n".join(out) + "\n").encode("utf-8")

    def agent_id(self) -> str:
        return "a" + "".join(self.rng.choices("0123456789abcdef", k=16))

    def session_id(self) -> str:
        return self._uuid()
