"""systemd readiness and watchdog notification (``sd_notify``), without libsystemd.

``NOTIFY_SOCKET`` names a datagram socket (``@`` = abstract namespace). Absent, every
call is a no-op, so the daemon runs the same under systemd, launchd or a terminal.
"""

from __future__ import annotations

import os
import socket


def notify(state: str, env=None) -> bool:
    """Send ``state`` (e.g. ``READY=1``) to systemd. Returns True when sent."""
    env = os.environ if env is None else env
    address = env.get("NOTIFY_SOCKET", "")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(address)
            s.sendall(state.encode())
        return True
    except OSError:
        return False


def watchdog_interval(env=None) -> float:
    """Seconds between WATCHDOG=1 pings (half of ``WATCHDOG_USEC``), or 0 when systemd
    did not ask for them (or asked another process)."""
    env = os.environ if env is None else env
    try:
        usec = int(env.get("WATCHDOG_USEC", "0"))
        pid = int(env.get("WATCHDOG_PID", str(os.getpid())))
    except ValueError:
        return 0.0
    if usec <= 0 or pid != os.getpid():
        return 0.0
    return usec / 2e6
