"""Shared test fixtures: a private ABCD_HOME, real git repositories, the fixture corpus.

Every test runs with ``ABCD_HOME`` and ``ABCD_SOCKET`` pointing into its own tmp dir, so
no test can touch the user's store or a running daemon, and with ``CLAUDE_CONFIG_DIR``
pointing at a tmp dir that does not exist: the harness store every daemon follows by
default (and ``abcd history ingest`` walks when given no root) is never the developer's
real ``~/.claude/projects``. A test that wants a harness store creates
``claude_dir / "projects"``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from abcd_daemon.paths import Home

FIXTURES = Path(__file__).parent / "fixtures" / "claude-code-log"


@pytest.fixture(autouse=True)
def abcd_env(tmp_path_factory, monkeypatch):
    """Isolate every test: its own ABCD_HOME and socket path."""
    base = tmp_path_factory.mktemp("abcd")
    monkeypatch.setenv("ABCD_HOME", str(base / "home"))
    monkeypatch.setenv("ABCD_SOCKET", str(base / "run" / "daemon.sock"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(base / "claude"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    return base


@pytest.fixture
def claude_dir(abcd_env) -> Path:
    """The harness's config directory for this test (``CLAUDE_CONFIG_DIR``; not created)."""
    return abcd_env / "claude"


@pytest.fixture
def home(abcd_env) -> Home:
    return Home(abcd_env / "home")


def git(*args: str, cwd) -> str:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="Test Author",
        GIT_AUTHOR_EMAIL="author@example.com",
        GIT_COMMITTER_NAME="Test Author",
        GIT_COMMITTER_EMAIL="author@example.com",
        GIT_CONFIG_NOSYSTEM="1",
    )
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def make_repo(path: Path, *, message: str = "root") -> str:
    """Create a real git repository with one commit at ``path``; return its root SHA."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)
    (path / "README").write_text(message + "\n")
    git("add", "README", cwd=path)
    git("commit", "-q", "-m", message, cwd=path)
    return git("rev-list", "--max-parents=0", "HEAD", cwd=path)


@pytest.fixture
def repo(tmp_path) -> tuple[Path, str]:
    """A real repository with one commit: (path, root_sha)."""
    path = tmp_path / "repo"
    return path, make_repo(path)


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


def run_on_a_terminal(cmd, env, timeout=120):
    """Run ``cmd`` with stderr on a pseudo-terminal (stdout piped): (returncode, stdout
    bytes, what was drawn on the terminal as text)."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    stdout = proc.stdout.read()
    proc.wait(timeout=timeout)
    os.close(master)
    return proc.returncode, stdout, b"".join(chunks).decode(errors="replace")
