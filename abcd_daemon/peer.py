"""The uid of the process at the other end of a connected Unix socket.

Both ends use it: the daemon refuses a client of another uid
(:mod:`abcd_daemon.server.connection`), and the CLI refuses a socket served by another
uid (:mod:`abcd_client.dial`) — abcd talks only to its own user. Standard library only,
and no ``socket.py`` (a CLI's start-up): SO_PEERCRED on Linux, ``getpeereid`` elsewhere
(through ctypes, imported only there).
"""

from __future__ import annotations

import _socket


def peer_uid(sock) -> int | None:
    """The peer's uid, or None where the platform cannot say."""
    peercred = getattr(_socket, "SO_PEERCRED", None)
    if peercred is not None:
        import struct

        creds = sock.getsockopt(_socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        uid, gid = ctypes.c_uint32(), ctypes.c_uint32()
        if libc.getpeereid(sock.fileno(), ctypes.byref(uid), ctypes.byref(gid)) == 0:
            return uid.value
    except (OSError, AttributeError):
        pass
    return None
