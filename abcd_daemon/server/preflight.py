"""Refusals at start: everything that would stop the daemon, checked before it starts.

``abcd daemon start`` runs :func:`preflight` in its own process, so the refusal is the
line ``start`` itself prints (exit non-zero, no traceback, no "see the log"); ``abcd
daemon run`` runs it again (a service manager starts ``run`` directly). Meanwhile the
hooks keep spooling — they never need the daemon — so nothing is lost while the cause is
fixed. Checked, in order:

1. ``ABCD_HOME`` is a directory, or can become one (a file there is refused);
2. the socket path fits a Unix socket address (``sun_path``: 108 bytes on Linux, 104 on
   macOS, NUL included) — unless systemd handed us the socket;
3. ``config.toml`` is usable (:func:`abcd_daemon.config.load_config`);
4. the scanner builds whole: a degraded one would refuse every capture, so a daemon
   running with it would only pile transcripts up in staging. It is built without its
   Vectorscan gate, which never decides whether a scanner is whole: compiling the gate
   on a cold cache (a first start, a cache directory the service cannot write) costs
   seconds of CPU — a minute on a busy machine — and the daemon does not listen until
   preflight is done; the first capture compiles it, in a worker thread, while the
   socket answers.
"""

from __future__ import annotations

import os
import sys

from ..config import Config, load_config
from ..errors import AbcdError, DegradedScanner, StorePathError
from ..paths import Home, socket_path

#: ``sizeof(sockaddr_un.sun_path)``: the path and its terminating NUL must fit.
SUN_PATH_MAX = 104 if sys.platform == "darwin" else 108


def socket_activated(env) -> bool:
    """True when systemd passed the listening socket (``LISTEN_FDS`` for this pid); its
    path is then systemd's, already bound. (launchd binds the plist's path, which is
    :func:`socket_path`, so the length check holds for it too.)"""
    try:
        return int(env.get("LISTEN_PID", "0")) == os.getpid() and int(env.get("LISTEN_FDS", "0")) > 0
    except ValueError:
        return False


def check_home(home: Home) -> None:
    root = home.root
    if os.path.lexists(root) and not os.path.isdir(root):
        raise StorePathError(
            f"ABCD_HOME {str(root)!r} is not a directory (a file or a dangling link is there)",
            hint="move it aside, or point ABCD_HOME at a directory of your own")


def check_socket_path(path: str) -> None:
    size = len(os.fsencode(path))
    if size + 1 > SUN_PATH_MAX:
        raise AbcdError(
            f"the socket path {path!r} is {size} bytes; a Unix socket path holds at most "
            f"{SUN_PATH_MAX - 1}",
            hint="set ABCD_SOCKET (or XDG_RUNTIME_DIR) to a shorter directory")


def check_scanner(config: Config) -> None:
    from ..scanner import build_scanner, probe_identity

    degraded = build_scanner(probe_identity(None), config.scanner_additions, gated=False).degraded
    if degraded:
        raise DegradedScanner(
            f"the scanner is degraded ({degraded}); the daemon would refuse every capture",
            hint="fix or remove the [[scanner.rules]] entry in config.toml, then start again "
                 "(hooks keep spooling meanwhile)")


def preflight(home: Home, env=None) -> Config:
    """Check everything that would stop the daemon (see module docstring) and return
    the configuration it would run with. Raises :class:`AbcdError` naming the first
    problem and what to do about it."""
    env = os.environ if env is None else env
    check_home(home)
    if not socket_activated(env):
        check_socket_path(socket_path(env))
    config = load_config(home.config_file)
    check_scanner(config)
    return config
