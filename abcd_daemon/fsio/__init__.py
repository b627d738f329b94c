"""Plain synchronous file I/O with the safety rules every caller needs.

- :mod:`.guarded` — the one way abcd reads a file it did not write itself.
- :mod:`.atomic` — the one way abcd writes a file a reader may look at.
- :mod:`.dirs` — creating and verifying owner-only directory chains.
- :mod:`.locks` — the one lock primitive (``flock`` with a deadline).
"""

from .atomic import atomic_write, fsync_dir
from .dirs import ensure_chain, ensure_dir, verify_chain
from .guarded import read_guarded
from .locks import file_lock

__all__ = [
    "atomic_write",
    "ensure_chain",
    "ensure_dir",
    "file_lock",
    "fsync_dir",
    "read_guarded",
    "verify_chain",
]
