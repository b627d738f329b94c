"""Pausing Python's cyclic garbage collector while a transcript is redacted, a
session is reconstructed or the index is bulk-synced: one mechanism for all three
(``scanner/pipeline.py``, ``reconstruct/api.py``, ``index/rows.py``), so overlapping
users in the daemon's threads share one count.

A dense transcript makes tens of thousands of short-lived objects per megabyte
(matches, spans, findings). None of them forms a reference cycle — reference
counting frees each as soon as it is dropped — yet every 700 allocations the
collector walks the young objects, and ever more often the old ones: a quarter of
the adversarial benchmark's time (``bench/redaction.py``: 0.36–0.42 MB per CPU
second with the collector, 0.46–0.58 without, 01:37 UTC 2 Dec 2026). A large
session's turn tables are hundreds of thousands of long-lived objects in no cycle,
walked again and again as they grow: 29.1 -> 23.0 CPU s for ``bench/bigfile.py``'s
1 GiB record, its 8 full collections collecting nothing (01:44 UTC 2 Dec 2026).

Contract:
- :func:`paused` is a context manager: the collector is off inside it and back in
  the state it found when the last of any overlapping (threaded) users leaves —
  a caller that had disabled it itself keeps it disabled;
- nothing is lost: cycles made meanwhile are collected once it is back on.
"""

from __future__ import annotations

import contextlib
import gc
import threading

_lock = threading.Lock()
_users = 0
_was_enabled = False


@contextlib.contextmanager
def paused():
    global _users, _was_enabled
    with _lock:
        if _users == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _was_enabled:
                gc.enable()
