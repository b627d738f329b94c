"""Where everything lives: the one module that computes abcd's paths.

This module is imported by the hook shim, which runs under ``python3 -I -S`` with the
standard library only and counts milliseconds, so it imports nothing at module level
(not even ``os``: paths are POSIX strings joined with ``/``) and uses no relative
imports. Callers that have an environment mapping pass it; ``env=None`` means
``os.environ``. It computes names; it never creates, opens or checks anything
(creation with its checks is :mod:`abcd_daemon.fsio.dirs`).

Layout (DESIGN §2)::

    ABCD_HOME/                      default ~/.abcd, env ABCD_HOME overrides
      spool/{tmp,new,failed}/       payloads handed over by shims (maildir discipline)
      spool/shim.log                one line per shim run: which path it took
      status.json                   the daemon's backlog summary, read by session-start
      harness-ledger.json           what the daemon last did with each harness transcript
      config.toml                   optional settings
      daemon.log[.1 .2 .3]          the log of a daemon `abcd daemon start` started (rotated)
      daemon.stderr                 that daemon's stderr: its refusal at start, if any
      transcripts/<root-sha>/       one lane per repository
        records/ staging/ quarantine/ sessions/ empty-mains/ subagent-payload-gap.json

The socket is ``$ABCD_SOCKET``, else ``$XDG_RUNTIME_DIR/abcd/daemon.sock``, else
``ABCD_HOME/run/daemon.sock`` (machines without a runtime dir, e.g. macOS, CI);
``daemon.lock`` lives beside it and in ``ABCD_HOME`` (one daemon per socket and one
per store). The spools, in the order the shim tries them and the daemon sweeps them:
``ABCD_HOME/spool``, ``<socket dir>/spool``, ``$TMPDIR/abcd-<uid>/spool``.
"""

DIR_MODE = 0o700
FILE_MODE = 0o600

SPOOL = "spool"
DAEMON_LOCK = "daemon.lock"
SHIM_LOG = "shim.log"
STATUS_FILE = "status.json"
HARNESS_LEDGER = "harness-ledger.json"
CONFIG_FILE = "config.toml"
DAEMON_LOG = "daemon.log"
DAEMON_STDERR = "daemon.stderr"
TRANSCRIPTS = "transcripts"

RECORDS = "records"
STAGING = "staging"
QUARANTINE = "quarantine"
SESSIONS = "sessions"
EMPTY_MAINS = "empty-mains"
GAP_MARKER = "subagent-payload-gap.json"
LANE_DIRS = (RECORDS, STAGING, QUARANTINE, SESSIONS)


def _environ(env):
    if env is not None:
        return env
    import os

    return os.environ


def _join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/") or "/"] + list(parts)).replace("//", "/")


def user_home(env=None) -> str:
    """``$HOME``, else the password database's home for this uid."""
    home = _environ(env).get("HOME", "")
    if home:
        return home
    import os

    return os.path.expanduser("~")


def abcd_home(env=None) -> str:
    """The abcd home: ``$ABCD_HOME`` if set and non-empty, else ``~/.abcd``."""
    env = _environ(env)
    value = env.get("ABCD_HOME", "")
    if value:
        return value
    return _join(user_home(env), ".abcd")


def cache_dir(env=None) -> str:
    """Derived, rebuildable data shared by every store of this user (the compiled
    ruleset): ``$ABCD_CACHE``, else ``$XDG_CACHE_HOME/abcd``, else ``~/.cache/abcd``."""
    env = _environ(env)
    if env.get("ABCD_CACHE", ""):
        return env["ABCD_CACHE"]
    base = env.get("XDG_CACHE_HOME", "") or _join(user_home(env), ".cache")
    return _join(base, "abcd")


def socket_path(env=None) -> str:
    """The daemon's Unix socket path (see module docstring for the fallbacks)."""
    env = _environ(env)
    explicit = env.get("ABCD_SOCKET", "")
    if explicit:
        return explicit
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime:
        return _join(runtime, "abcd", "daemon.sock")
    return _join(abcd_home(env), "run", "daemon.sock")


def lock_path(env=None) -> str:
    """The single-instance lock beside the socket (the store's own is
    :attr:`Home.daemon_lock`)."""
    return _join(socket_path(env).rpartition("/")[0] or ".", DAEMON_LOCK)


def spools(env=None) -> list:
    """Every spool directory, primary first: ``ABCD_HOME/spool``, then the fallbacks the
    shim uses when the home cannot take a payload — beside the socket, then a per-user
    directory under the temp dir. Each is a path ending in ``/spool`` whose parent is
    the first abcd-owned level (:func:`abcd_daemon.safedir.open_spool`). A location
    that coincides with an earlier one is listed once."""
    env = _environ(env)
    import posix

    tmp_root = (env.get("TMPDIR", "") or "/tmp").rstrip("/") or "/"
    out = []
    for spool in (_join(abcd_home(env), SPOOL),
                  _join(socket_path(env).rpartition("/")[0] or ".", SPOOL),
                  _join(tmp_root, "abcd-%d" % posix.geteuid(), SPOOL)):
        if spool not in out:
            out.append(spool)
    return out


class Home:
    """Names under one abcd home, as ``pathlib.Path`` objects. Pure: computing a name
    touches nothing. (pathlib is imported here, not at module level: the shim uses the
    string functions above and must start fast.)"""

    __slots__ = ("root",)

    def __init__(self, root) -> None:
        from pathlib import Path

        self.root = Path(root)

    @classmethod
    def from_env(cls, env=None) -> "Home":
        return cls(abcd_home(env))

    @property
    def spool(self):
        return self.root / SPOOL

    @property
    def spool_tmp(self):
        return self.spool / "tmp"

    @property
    def spool_new(self):
        return self.spool / "new"

    @property
    def spool_failed(self):
        return self.spool / "failed"

    @property
    def shim_log(self):
        return self.spool / SHIM_LOG

    @property
    def daemon_lock(self):
        return self.root / DAEMON_LOCK

    @property
    def status_file(self):
        return self.root / STATUS_FILE

    @property
    def harness_ledger(self):
        return self.root / HARNESS_LEDGER

    @property
    def config_file(self):
        return self.root / CONFIG_FILE

    @property
    def daemon_log(self):
        return self.root / DAEMON_LOG

    @property
    def daemon_stderr(self):
        return self.root / DAEMON_STDERR

    @property
    def transcripts(self):
        return self.root / TRANSCRIPTS

    def lane(self, root_sha: str):
        """The lane directory of one repository. ``root_sha`` must already be valid."""
        return self.transcripts / root_sha
