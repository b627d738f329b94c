"""Giving memory back: a long-lived daemon must not keep the peak of its largest reply.

A reconstruct decodes every line of a session, renders the artefact and sends it in
chunks; once the reply is sent all of it is garbage, yet three things would keep it
resident for the rest of the daemon's life (measured on a 30 MB session: 44 MiB idle,
102 MiB after serving it, whatever followed; 49 MiB with what this module does):
- the turn model holds reference cycles, which only a full collection frees;
- glibc keeps freed heap pages for reuse — and by default it raises its mmap and trim
  thresholds after the first large free (up to 32 and 64 MiB), so the freed top of a
  worker thread's arena is never handed back, not even by ``malloc_trim``;
- ``malloc_trim`` is needed for the free pages in the middle of an arena.
So :func:`tune_allocator` (at daemon start) fixes both thresholds — allocations of
:data:`MMAP_THRESHOLD` or more get their own mapping, returned the moment they are
freed, and an arena's free top over :data:`TRIM_THRESHOLD` is released — and
:func:`release_after` collects and trims after a reply of at least
:data:`TRIM_AFTER_BYTES` (both cost tens of milliseconds, so not after every reply).
Without glibc (macOS, musl) only the collection runs: those allocators return large
frees on their own.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys

#: Replies at least this large are followed by a collection and a trim.
TRIM_AFTER_BYTES = 4 << 20
#: glibc ``mallopt`` parameters (malloc.h) and the values the daemon fixes them at.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 1 << 20
TRIM_THRESHOLD = 4 << 20


def _glibc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        return libc
    except (OSError, AttributeError):
        return None  # not glibc (musl has neither)


_LIBC = _glibc()


def tune_allocator() -> bool:
    """Fix glibc's mmap and trim thresholds (see module docstring). True when done."""
    if _LIBC is None:
        return False
    return bool(_LIBC.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and _LIBC.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def release_after(reply_bytes: int) -> bool:
    """After a reply of ``reply_bytes``: collect its garbage and return the freed heap
    to the kernel. True when it did (the reply was large enough)."""
    if reply_bytes < TRIM_AFTER_BYTES:
        return False
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
    return True
