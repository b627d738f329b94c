"""A one-line progress bar for long work on a terminal (ingest, a large drain).

The CLI draws it on stderr only when stderr is a terminal, so piped output stays clean.
It is fed ``(files_done, files_total, bytes_done, bytes_total)`` — the signature of the
core's progress callbacks and of the daemon's ``Progress`` frames.
"""

from __future__ import annotations

import time

from . import output


class Bar:
    """A one-line progress bar on a terminal: ``\\r``-redrawn, throttled, cleared at the
    end. Phases (reading, staging, draining) are told apart by their totals changing or
    their count going back (the daemon may drop a phase's first, zero, message)."""

    def __init__(self, stream, phases: tuple[str, ...] = ("working",)) -> None:
        self.stream = stream
        self.phases = phases
        self.phase = -1
        self.key: tuple[int, int] | None = None
        self.last_done = 0
        self.started = 0.0
        self.drawn_at = 0.0
        self.width = 0

    def __call__(self, files_done: int, files_total: int, bytes_done: int, bytes_total: int) -> None:
        now = time.monotonic()
        if (files_total, bytes_total) != self.key or files_done < self.last_done:
            self.phase, self.key, self.started = self.phase + 1, (files_total, bytes_total), now
        self.last_done = files_done
        if now - self.drawn_at < 0.1 and files_done < files_total:
            return
        self.drawn_at = now
        label = self.phases[min(self.phase, len(self.phases) - 1)]
        fraction = bytes_done / bytes_total if bytes_total else (files_done / files_total if files_total else 1)
        filled = int(fraction * 20)
        eta = ""
        elapsed = now - self.started
        if 0 < fraction < 1 and elapsed > 0.5:
            eta = f"  ETA {_duration(elapsed / fraction - elapsed)}"
        amount = (f"{output.human_bytes(bytes_done)} of {output.human_bytes(bytes_total)}"
                  if bytes_total else output.human_bytes(bytes_done))  # 0: total unknown
        line = (f"{label:<9}[{'#' * filled}{'.' * (20 - filled)}] {files_done}/{files_total} files  "
                f"{amount}{eta}")
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = len(line)

    def close(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"
