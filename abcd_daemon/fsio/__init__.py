"""Plain synchronous file I/O with the safety rules every caller needs.

- :mod:`.guarded` — the one way abcd reads a file it did not write itself.
- :mod:`.atomic` — the one way abcd writes a file a reader may look at.
- :mod:`.dirs` — creating and verifying owner-only directory chains.
- :mod:`.locks` — the one lock primitive (``flock`` with a deadline).

The names below load on first use (PEP 562): a module that needs only
:mod:`.dirs` (a CLI verb finding its lane) does not import the other three.
"""

import importlib

#: Where each public name is defined.
_PUBLIC = {"atomic_write": "atomic", "fsync_dir": "atomic", "ensure_chain": "dirs",
           "ensure_dir": "dirs", "verify_chain": "dirs", "read_guarded": "guarded",
           "file_lock": "locks"}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    globals()[name] = value
    return value
