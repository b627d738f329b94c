"""Byte counts for people: one rendering, shared by the CLI and the hook shim (standard
library only, no imports, like :mod:`abcd_daemon.paths`)."""


def human_bytes(n: int) -> str:
    """1536 → '1.5 KiB'; under 1 KiB → '512 bytes'."""
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return "%d bytes" % n if unit == "bytes" else "%.1f %s" % (value, unit)
        value /= 1024
    return "%d bytes" % n
