"""Reading a harness transcript for ingest, of any size, in bounded memory.

Both readers open the file guarded (a regular file, no symlinked leaf, at most
``cap`` bytes: ``max_transcript_bytes``) and never hold it whole:

- :func:`file_digest` — its sha256 and size, read block by block (what ingest needs to
  tell a transcript the corpus already holds: a read and a hash per file);
- :func:`file_facts` — its :class:`~.facts.Facts`, read line by line under the line
  cap (``max_line_bytes``), of exactly the ``size`` bytes that were hashed, so the
  facts and the digest describe the same bytes even when the file grows meanwhile.

Refusals are :class:`~abcd_daemon.errors.ReadRefused` (``reason`` ``missing``,
``not-regular``, ``too-big``, ``foreign-owner``, ``unreadable``; a line over the line
cap is ``too-big`` too, with the cap named) — the caller reports them, never raises.
"""

from __future__ import annotations

import hashlib
import os

from ..errors import ReadRefused, RetryableError
from ..fsio.guarded import open_guarded
from ..store.chunks import OverCap, hash_prefix, iter_lines
from .facts import Facts, FactsReader

_BUFFER = 1 << 20


def file_digest(path: str, *, cap: int) -> tuple[str, int]:
    """``(sha256, size)`` of the transcript at ``path``. Raises ReadRefused."""
    fd, size = open_guarded(path, cap, what="transcript")
    with os.fdopen(fd, "rb", buffering=_BUFFER) as f:
        hasher = hashlib.sha256()
        try:
            hash_prefix(f, size, hasher, what=f"transcript {path!r}")
        except RetryableError as exc:  # it shrank while read
            raise ReadRefused(str(exc), reason="unreadable") from None
        except OSError as exc:
            raise ReadRefused(f"transcript {path!r} could not be read ({exc.strerror})",
                              reason="unreadable") from None
    return hasher.hexdigest(), size


def file_facts(path: str, *, sha256: str, size: int, cap: int, line_cap: int) -> Facts:
    """The facts of the first ``size`` bytes of the transcript at ``path`` (whose
    digest is ``sha256``). Raises ReadRefused."""
    fd, now = open_guarded(path, cap, what="transcript")
    reader = FactsReader()
    with os.fdopen(fd, "rb", buffering=_BUFFER) as f:
        if now < size:
            raise ReadRefused(f"transcript {path!r} shrank while it was read", reason="unreadable")
        try:
            for line in iter_lines(f, size, line_cap=line_cap, what=f"transcript {path!r}"):
                reader.add(line)
        except OverCap as exc:
            raise ReadRefused(str(exc), reason="too-big") from None
        except RetryableError as exc:
            raise ReadRefused(str(exc), reason="unreadable") from None
        except OSError as exc:
            raise ReadRefused(f"transcript {path!r} could not be read ({exc.strerror})",
                              reason="unreadable") from None
    return reader.facts(sha256=sha256, size=size)
