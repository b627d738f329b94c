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
import time
from pathlib import Path

import pytest

from abcd_daemon.paths import Home

FIXTURES = Path(__file__).parent / "fixtures" / "claude-code-log"


#: A repository addition that matches what its own mask leaves (it masks one byte of
#: an alphanumeric run that the next round matches again): it never converges, so
#: every capture of a line holding "…QQ" is refused — the tests' way to a residual.
NEVER_CONVERGES = {"name": "test-self-matching", "severity": "hard_fail", "keywords": ["qq"],
                   "regex": r"(?P<secret>[A-Za-z0-9])[A-Za-z0-9]*QQ"}


def _machine_lock(tmp_path_factory, mode: int):
    """Hold ``flock(mode)`` on a lock file every worker of this run shares (the xdist
    workers' base temp directories have one parent) for the fixture's test."""
    import fcntl

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    fd = os.open(shared / "machine.lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)


@pytest.fixture
def saturates_the_machine(tmp_path_factory):
    """For a test that loads the machine on purpose (a burst of 200 hook processes):
    it waits until no ``measures_latency`` test runs on another worker, and none starts
    until it is done. A burst beside a latency promise starved that test's daemon (13 s
    to answer, where it takes 2) — the other test's failure, not this one's."""
    import fcntl

    yield from _machine_lock(tmp_path_factory, fcntl.LOCK_EX)


@pytest.fixture
def measures_latency(tmp_path_factory):
    """For a test whose assertions are wall-clock promises (stored within N s): it never
    runs beside a ``saturates_the_machine`` test (any number of these run together)."""
    import fcntl

    yield from _machine_lock(tmp_path_factory, fcntl.LOCK_SH)


@pytest.fixture(scope="module", autouse=True)
def no_daemon_left_behind(request, tmp_path_factory):
    """A test file must stop every daemon it started, even when a test fails: after the
    file (its module fixtures torn down first) a daemon of this run still running is
    stopped here and reported as an error of the file's last test (:mod:`tests.leaks`)."""
    from . import leaks

    yield
    base = tmp_path_factory.getbasetemp()
    deadline = time.monotonic() + 5  # a daemon told to stop may still be exiting
    while (left := leaks.daemons_under(base)) and time.monotonic() < deadline:
        time.sleep(0.1)
    if left:
        leaks.stop_all(left)
        pytest.fail(f"{request.node.nodeid} left {len(left)} daemon(s) running (now stopped): "
                    + "; ".join(f"pid {pid}: {cmd}" for pid, cmd in sorted(left.items())), pytrace=False)


@pytest.fixture(scope="session")
def ruleset_cache(tmp_path_factory):
    """One compiled-ruleset cache for the whole run, warmed before the first test:
    compiling it takes seconds, which no test's own timing should absorb."""
    path = tmp_path_factory.mktemp("ruleset-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ABCD_CACHE", str(path))
        from abcd_daemon.scanner import Identity, build_scanner

        assert build_scanner(Identity(home="/nonexistent-home", user="nobody-here")).degraded == ""
    return path


@pytest.fixture(autouse=True)
def abcd_env(tmp_path_factory, monkeypatch, ruleset_cache):
    """Isolate every test: its own ABCD_HOME and socket path; a shared ruleset cache."""
    base = tmp_path_factory.mktemp("abcd")
    monkeypatch.setenv("ABCD_CACHE", str(ruleset_cache))
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


class OtherUser:
    """A real second local user (created for the test run, removed after it)."""

    def __init__(self, name: str) -> None:
        import pwd

        entry = pwd.getpwnam(name)
        self.name, self.uid, self.gid = name, entry.pw_uid, entry.pw_gid

    def owns(self, *paths) -> None:
        """Hand ``paths`` to this user, as if they had planted them."""
        for path in paths:
            os.chown(path, self.uid, self.gid, follow_symlinks=False)


@pytest.fixture(scope="session")
def other_user():
    """A throwaway second uid made with ``useradd`` (CI runs as root); skipped, with the
    reason, where that is impossible."""
    import shutil
    import uuid

    if os.geteuid() != 0:
        pytest.skip("a second uid is needed: creating one with useradd needs root")
    if shutil.which("useradd") is None:
        pytest.skip("useradd is not installed, so no second uid can be created")
    name = "abcdt" + uuid.uuid4().hex[:8]
    res = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/bin/false", name],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"useradd could not create a second user ({res.stderr.strip()})")
    try:
        yield OtherUser(name)
    finally:
        subprocess.run(["userdel", name], capture_output=True)
