"""Where everything lives: the one module that computes abcd's paths.

This module is imported by the hook shim, which runs under ``python3 -I -S`` with the
standard library only, so it imports nothing but the standard library and uses no
relative imports. It computes names; it never creates, opens or checks anything
(creation with its checks is :mod:`abcd_daemon.fsio.dirs`).

Layout (DESIGN §2)::

    ABCD_HOME/                      default ~/.abcd, env ABCD_HOME overrides
      spool/{tmp,new,failed}/       payloads handed over by shims (maildir discipline)
      spool/shim.log                one line per shim run: which path it took
      status.json                   the daemon's backlog summary, read by session-start
      config.toml                   optional settings
      transcripts/<root-sha>/       one lane per repository
        records/ staging/ quarantine/ sessions/ subagent-payload-gap.json

The socket is ``$ABCD_SOCKET``, else ``$XDG_RUNTIME_DIR/abcd/daemon.sock``, else
``ABCD_HOME/run/daemon.sock`` (machines without a runtime dir, e.g. macOS, CI);
``daemon.lock`` lives beside it.
"""

import os
import re
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600

ROOT_SHA_RE = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")

RECORDS = "records"
STAGING = "staging"
QUARANTINE = "quarantine"
SESSIONS = "sessions"
GAP_MARKER = "subagent-payload-gap.json"
LANE_DIRS = (RECORDS, STAGING, QUARANTINE, SESSIONS)


def abcd_home(env=None) -> Path:
    """The abcd home: ``$ABCD_HOME`` if set and non-empty, else ``~/.abcd``."""
    env = os.environ if env is None else env
    value = env.get("ABCD_HOME", "")
    if value:
        return Path(value)
    return Path(os.path.expanduser("~")) / ".abcd"


def socket_path(env=None) -> Path:
    """The daemon's Unix socket path (see module docstring for the fallbacks)."""
    env = os.environ if env is None else env
    explicit = env.get("ABCD_SOCKET", "")
    if explicit:
        return Path(explicit)
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime:
        return Path(runtime) / "abcd" / "daemon.sock"
    return abcd_home(env) / "run" / "daemon.sock"


def lock_path(env=None) -> Path:
    """The single-instance lock, beside the socket."""
    return socket_path(env).with_name("daemon.lock")


class Home:
    """Names under one abcd home. Pure: computing a name touches nothing."""

    __slots__ = ("root",)

    def __init__(self, root) -> None:
        self.root = Path(root)

    @classmethod
    def from_env(cls, env=None) -> "Home":
        return cls(abcd_home(env))

    @property
    def spool(self) -> Path:
        return self.root / "spool"

    @property
    def spool_tmp(self) -> Path:
        return self.spool / "tmp"

    @property
    def spool_new(self) -> Path:
        return self.spool / "new"

    @property
    def spool_failed(self) -> Path:
        return self.spool / "failed"

    @property
    def shim_log(self) -> Path:
        return self.spool / "shim.log"

    @property
    def status_file(self) -> Path:
        return self.root / "status.json"

    @property
    def config_file(self) -> Path:
        return self.root / "config.toml"

    @property
    def transcripts(self) -> Path:
        return self.root / "transcripts"

    def lane(self, root_sha: str) -> Path:
        """The lane directory of one repository. ``root_sha`` must already be valid."""
        return self.transcripts / root_sha
