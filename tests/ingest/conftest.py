"""Harness trees for ingest tests: the real Claude Code fixture tree with its recorded
cwds rewritten to real git repositories, and generated JSONL store harness trees."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from abcd_daemon.config import Config

from ..conftest import git, make_repo

T0 = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z

#: Recorded cwd (as anonymised in the fixtures) → the test repository standing in for it.
#: None: a directory that no longer exists (it must not vote on ownership).
CWD_MAP = {
    "-experiments/worktrees": "worktrees",
    "/Users/dain/workspace/danieldemmel.me-next": "danieldemmel",
    "/Users/dain/workspace/online-llm-tokenizer": None,
    "/Users/dain/workspace/claude-code-log": "claude-code-log",
    "/src/deep-manifest": "deep-manifest",
    "/Users/dain/workspace/JSSoundRecorder": "jssoundrecorder",
    "/Users/dain/workspace/coderabbit-review-helper": "coderabbit",
    "/home/user/project": "ideas",
    "/src/experiments/claude_p": "claude-p",
}
#: Worktrees the fixture's agents ran in (created with `git worktree add`).
WORKTREES = ("agent-a4ca7529", "agent-ab1e6e14", "agent-a52886dc")
#: Non-empty fixture files with no conversation in them (a title, snapshots).
NOT_CONVERSATIONS = {
    "-Users-dain-workspace-claude-code-log-sample/4e27c414-a885-46a0-b5c8-d58e1417377d.jsonl",
    "-experiments-ideas/a95fea4a-b88a-4e49-ac07-4cc323d8700c.jsonl",
}
_CWD = re.compile(rb'"cwd":"([^"]*)"')


@dataclass
class FixtureTree:
    root: Path  # the copied projects directory
    repos: dict[str, tuple[Path, str]] = field(default_factory=dict)
    gone: Path = Path("/nonexistent")

    def transcripts(self) -> list[Path]:
        return sorted(self.root.rglob("*.jsonl"))

    def conversations(self) -> list[Path]:
        """Every non-empty transcript that holds a conversation."""
        return [p for p in self.transcripts()
                if p.stat().st_size and str(p.relative_to(self.root)) not in NOT_CONVERSATIONS]

    def sha(self, name: str) -> str:
        return self.repos[name][1]


def rewrite_cwds(path: Path, mapping) -> None:
    """Rewrite every recorded ``"cwd":"…"`` value through ``mapping(old) -> new``."""
    def sub(match):
        return b'"cwd":"' + mapping(match.group(1).decode()).encode() + b'"'

    path.write_bytes(_CWD.sub(sub, path.read_bytes()))


def build_fixture_tree(base: Path, fixtures_dir: Path) -> FixtureTree:
    tree = FixtureTree(root=base / "projects", gone=base / "gone")
    shutil.copytree(fixtures_dir / "real_projects", tree.root)
    for name in sorted({v for v in CWD_MAP.values() if v}):
        path = base / "repos" / name
        tree.repos[name] = (path, make_repo(path, message=f"root of {name}"))
    (base / "repos" / "claude-code-log" / "test").mkdir()
    worktrees = base / "repos" / "worktrees"
    for wt in WORKTREES:
        git("worktree", "add", "-q", str(worktrees / ".claude" / "worktrees" / wt), cwd=worktrees)

    def mapping(old: str) -> str:
        for prefix in sorted(CWD_MAP, key=len, reverse=True):
            if old == prefix or old.startswith(prefix + "/"):
                name = CWD_MAP[prefix]
                target = base / "repos" / name if name else tree.gone
                return str(target) + old[len(prefix):]
        return old

    for path in tree.transcripts():
        rewrite_cwds(path, mapping)
    return tree


@pytest.fixture
def fixture_tree(tmp_path, fixtures_dir) -> FixtureTree:
    return build_fixture_tree(tmp_path, fixtures_dir)


@pytest.fixture
def config() -> Config:
    return Config()


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def aged_transcript(path: Path, session: str, cwd, n: int = 3, *, agent: str = "",
                    age_s: float = 60.0) -> Path:
    """A Claude Code transcript of ``n`` lines last modified ``age_s`` seconds ago."""
    write_jsonl(path, [claude_line(session, str(cwd), i, agent=agent) for i in range(n)])
    when = time.time_ns() - int(age_s * 1e9)
    os.utime(path, ns=(when, when))
    return path


def store_record(session: str, n: int, *, agent: str = "", kind: str = "message") -> dict:
    """One line of the seed-004 JSONL store harness."""
    rec = {"uuid": f"{session}-{agent}-{n}", "parent_uuid": f"{session}-{agent}-{n - 1}" if n else "",
           "session_id": session, "timestamp": f"2026-01-01T00:00:{n:02d}Z", "type": kind}
    if agent:
        rec.update(agent_id=agent, is_sidechain=True)
    if kind == "message":
        role = "assistant" if n % 2 else "user"
        rec["message"] = {"role": role, "content": f"turn {n}"}
        if role == "assistant":
            rec["usage"] = {"input_tokens": 10, "output_tokens": 5}
    else:
        rec["boundary"] = {"summary": "compacted"}
    return rec


def claude_line(session: str, cwd: str, n: int, *, agent: str = "") -> dict:
    """One Claude Code message line."""
    rec = {"type": "user" if n % 2 == 0 else "assistant", "uuid": f"u{n}", "sessionId": session,
           "cwd": cwd, "timestamp": f"2026-01-01T00:00:{n:02d}Z",
           "message": {"role": "user", "content": f"line {n}"}}
    if agent:
        rec.update(agentId=agent, isSidechain=True)
    return rec
