"""The daemon's log: where its lines go and what a line may carry.

Rules:
- One record is one line. The message is escaped (:func:`abcd_daemon.logline.escape`)
  and every traceback line is escaped and indented under ``    | ``, so no text a peer
  or a payload chose can end a line early or start one that looks like abcd's.
- What is logged never includes a payload value (intake scrubs its messages,
  :mod:`abcd_daemon.intake.reasons`); an unexpected error on unredacted input is
  logged by :func:`log_unexpected`: its type and traceback frames, not its message.
- Destinations, one per daemon:
  - a file (``abcd daemon run --log-file``; ``abcd daemon start`` passes
    ``ABCD_HOME/daemon.log``): rotated at ``config.log_max_bytes`` keeping
    ``config.log_backups`` older files, every one of them owner-only (0600, created
    with ``O_NOFOLLOW``: a planted symlink is refused, not written through);
  - the journal, when stderr is the journal stream (systemd sets ``JOURNAL_STREAM``
    to the device and inode of the stream it gave us): no timestamp (the journal keeps
    its own) and a ``<N>`` syslog priority prefix, so ``journalctl -p warning`` works;
  - else stderr, with timestamps.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
import traceback

from ..config import Config
from ..logline import escape

FORMAT = "%(asctime)s abcd[%(process)d] %(levelname)s %(message)s"
#: logging level → syslog priority (sd-daemon(3) prefixes).
_PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3,
             logging.CRITICAL: 2}


class OneLineFormatter(logging.Formatter):
    """Formats a record as one escaped line (plus indented, escaped traceback lines)."""

    def format(self, record: logging.LogRecord) -> str:
        record.message = escape(record.getMessage())
        if self.usesTime():
            record.asctime = self.formatTime(record, self.datefmt)
        text = self.formatMessage(record)
        trace = getattr(record, "trace", "")  # set by log_unexpected
        if record.exc_info:
            trace = self.formatException(record.exc_info)
        if trace:
            text += "".join("\n    | " + escape(line) for line in trace.splitlines())
        return text


class JournalFormatter(OneLineFormatter):
    def __init__(self) -> None:
        super().__init__("%(message)s")

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"<{_PRIORITY.get(record.levelno, 6)}>"
        return "\n".join(prefix + line for line in super().format(record).split("\n"))


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A size-rotated log whose every file is owner-only and never a symlink."""

    def _open(self):
        fd = os.open(self.baseFilename,
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        os.fchmod(fd, 0o600)  # a log left by an older abcd may be wider
        return os.fdopen(fd, "a", encoding=self.encoding or "utf-8", errors="backslashreplace")


def stderr_is_journal(env) -> bool:
    """True when fd 2 is the stream systemd's journal gave us (``JOURNAL_STREAM``)."""
    value = env.get("JOURNAL_STREAM", "")
    try:
        device, inode = (int(part) for part in value.split(":"))
        st = os.fstat(2)
    except (ValueError, OSError):
        return False
    return (st.st_dev, st.st_ino) == (device, inode)


def configure(*, verbose: bool, log_file: str, config: Config, env) -> logging.Handler:
    """Point the root logger at the daemon's one destination (see module docstring).
    Raises OSError when ``log_file`` cannot be opened."""
    if log_file:
        handler: logging.Handler = PrivateRotatingFileHandler(
            log_file, maxBytes=config.log_max_bytes, backupCount=config.log_backups)
        handler.setFormatter(OneLineFormatter(FORMAT))
    elif stderr_is_journal(env):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JournalFormatter())
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(OneLineFormatter(FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    logging.getLogger("abcd.daemon").setLevel(logging.INFO)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # it logs a line per change
    return handler


def log_unexpected(log: logging.Logger, what: str, exc: BaseException) -> str:
    """Log an unexpected error met while handling unredacted input: its type and where
    it was raised, never its message (which may quote the input). Returns the summary."""
    summary = f"{what}: unexpected {type(exc).__name__}"
    log.error("%s (its message is withheld: it may quote unredacted input)", summary,
              extra={"trace": "".join(traceback.format_tb(exc.__traceback__))})
    return summary
