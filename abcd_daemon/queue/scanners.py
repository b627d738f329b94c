"""Scanners for the drain, built once per repository and reused.

A scanner carries the repository's git identity (user names and e-mails, including
repo-local ones), so it is keyed by the checkout the transcript came from. Entries are
rebuilt after ``max_age_s`` so an identity change reaches the next capture. Building
never raises: a broken configuration yields a degraded scanner, which capture refuses.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable

from ..config import Config


class ScannerPool:
    def __init__(self, config: Config, *, max_age_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._config = config
        self._max_age_s = max_age_s
        self._clock = clock
        self._cache: dict[str, tuple[float, object]] = {}
        self._lock = threading.Lock()

    def get(self, repo_root: str = ""):
        """The scanner for ``repo_root`` ("" or a vanished checkout: global identity)."""
        from ..scanner import build_scanner, probe_identity

        key = repo_root if repo_root and os.path.isdir(repo_root) else ""
        now = self._clock()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and now - hit[0] < self._max_age_s:
                return hit[1]
        scanner = build_scanner(probe_identity(key or None), self._config.scanner_additions)
        with self._lock:
            self._cache[key] = (now, scanner)
        return scanner
