"""A span of time for people, as the artefact and the CLI both print it.

Its own module so the CLI can print a served reconstruction's duration without loading
the renderer.
"""

from __future__ import annotations


def duration(seconds: float) -> str:
    """Go-style ``5m10s`` for a span in seconds (``<1s`` for a positive fraction)."""
    whole = int(seconds)
    if whole <= 0:
        return "<1s" if seconds > 0 else "0s"
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return (f"{h}h{m}m{s}s" if h else f"{m}m{s}s" if m else f"{s}s")
