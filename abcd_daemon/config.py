"""Tunables in one object, with the reason for each default.

``Config`` is immutable; :func:`load_config` reads ``ABCD_HOME/config.toml`` (optional).
A present but unusable file is an error naming the key and what to do — never a silent
fallback to defaults, because a user who configured a scanner addition must not get a
corpus scanned without it. Scanner additions are validated by the scanner itself (an
unusable addition degrades it, which refuses every capture).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from pathlib import Path

from .errors import InputError
from .fsio.guarded import read_guarded
from .limits import CONFIG_CAP, MIB

DAY = 86400.0


@dataclasses.dataclass(frozen=True)
class DrainBudget:
    """A pass ends at whichever bound is reached first; ``0`` means unbounded.
    A pass always attempts its first entry, whatever its size."""

    max_bytes: int = 0
    max_count: int = 0


@dataclasses.dataclass(frozen=True)
class Config:
    #: A staged entry older than this is overdue: drained first, named in every notice,
    #: never deleted (seed 003: age buys priority and nothing else).
    staged_ttl_s: float = 7 * DAY
    #: Session notes older than this are pruned when a note is written.
    session_note_ttl_s: float = 30 * DAY
    #: One daemon drain pass. Redaction runs at tens of MB/s, so 16 MiB keeps a pass
    #: (and so the wait for shutdown or for reordering overdue work) around a second;
    #: the count bound keeps a flood of tiny files from monopolising a pass.
    drain_budget: DrainBudget = DrainBudget(max_bytes=16 * MIB, max_count=64)
    #: Seconds between timer-driven drain passes and spool sweeps when nothing rings.
    drain_interval_s: float = 30.0
    sweep_interval_s: float = 60.0
    #: A transcript whose last line is incomplete is re-read for up to this long.
    settle_timeout_s: float = 3.0
    settle_poll_s: float = 0.05
    #: Per-transcript scanning deadline: floor plus seconds per MiB. Past it the
    #: capture fails closed (retryable).
    scan_deadline_floor_s: float = 20.0
    scan_deadline_per_mib_s: float = 2.0
    #: Lock budgets: staging is per key and short; the lane lock covers a capture.
    stage_lock_timeout_s: float = 5.0
    lane_lock_timeout_s: float = 120.0
    #: Follow the harness's own store (``$CLAUDE_CONFIG_DIR/projects``, else
    #: ``~/.claude/projects``): completeness must not depend on hooks firing, and the
    #: harness deletes transcripts after its retention period.
    watch_harness_store: bool = True
    #: Further harness roots to follow (hook-less harnesses), and how long a watched
    #: file must be quiet before it is staged: long enough that a harness mid-response
    #: (tool calls take seconds) is not captured once per line.
    watch_roots: tuple[str, ...] = ()
    watch_settle_s: float = 30.0
    #: Redaction workers off the event loop.
    redaction_workers: int = 1
    #: Scanner additions, as given (validated by the scanner).
    scanner_additions: tuple[dict, ...] = ()
    #: ``[pricing."<model>"]`` tables: prices that override or add to the shipped table.
    pricing: tuple[tuple[str, dict], ...] = ()
    #: SIGTERM grace: the current item may finish within this many seconds.
    shutdown_grace_s: float = 10.0
    #: systemd watchdog ping interval fallback when WATCHDOG_USEC is absent.
    watchdog_fallback_s: float = 0.0
    #: ``daemon.log`` is rotated at this size, keeping this many older files
    #: (``daemon.log.1`` …): 5 MiB holds weeks of a busy daemon's lines, and the cap
    #: bounds the disk a noisy failure can take to 20 MiB.
    log_max_bytes: int = 5 * MIB
    log_backups: int = 3
    #: Caps that fit real sessions (issue 16): main transcripts of 100-800 MB, single
    #: lines of ~60 MB (a pasted file), multi-GB compaction agents. A transcript with
    #: a line over ``max_line_bytes`` or a size over ``max_transcript_bytes`` is
    #: refused whole, never truncated, and kept (spool/failed or staging) for
    #: ``abcd history retry`` once the cap is raised. Capture's memory is bounded by
    #: the longest line plus ``capture_chunk_bytes`` (lines are redacted in batches
    #: of at most that many bytes, a longer line alone), not by the file.
    max_line_bytes: int = 256 * MIB
    max_transcript_bytes: int = 8 * 1024 * MIB
    capture_chunk_bytes: int = 4 * MIB

    def scan_deadline(self, nbytes: int) -> float:
        return self.scan_deadline_floor_s + self.scan_deadline_per_mib_s * nbytes / MIB


_FLOAT_KEYS = {
    "staged_ttl_days": ("staged_ttl_s", DAY),
    "drain_interval_s": ("drain_interval_s", 1.0),
    "sweep_interval_s": ("sweep_interval_s", 1.0),
    "settle_timeout_s": ("settle_timeout_s", 1.0),
    "watch_settle_s": ("watch_settle_s", 1.0),
    "scan_deadline_floor_s": ("scan_deadline_floor_s", 1.0),
    "scan_deadline_per_mib_s": ("scan_deadline_per_mib_s", 1.0),
    "shutdown_grace_s": ("shutdown_grace_s", 1.0),
}


#: Integer settings: key → (lowest, highest) accepted value.
_INT_KEYS = {
    "redaction_workers": (1, 16),
    "log_max_bytes": (4 * 1024, 1 << 30),
    "log_backups": (1, 20),
    "max_line_bytes": (4 * 1024, 1 << 40),
    "max_transcript_bytes": (4 * 1024, 1 << 44),
    "capture_chunk_bytes": (64 * 1024, 1 << 30),
}


def parse_config(text: str, *, source: str = "config.toml") -> Config:
    """Build a :class:`Config` from TOML text. Raises :class:`InputError` naming the key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source} is not valid TOML ({exc})", hint="fix or remove it") from None
    except RecursionError:
        raise InputError(f"{source} nests deeper than any abcd setting", hint="fix or remove it") from None
    changes: dict = {}
    for key, value in data.items():
        if key in _FLOAT_KEYS:
            field, scale = _FLOAT_KEYS[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise InputError(f"{source}: {key} must be a positive number, not {value!r}")
            changes[field] = float(value) * scale
        elif key == "drain":
            changes["drain_budget"] = _budget(value, source)
        elif key == "watch_roots":
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise InputError(f"{source}: watch_roots must be a list of directory paths")
            changes["watch_roots"] = tuple(os.path.expanduser(v) for v in value)
        elif key == "watch_harness_store":
            if not isinstance(value, bool):
                raise InputError(f"{source}: watch_harness_store must be true or false")
            changes["watch_harness_store"] = value
        elif key in _INT_KEYS:
            low, high = _INT_KEYS[key]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InputError(f"{source}: {key} must be an integer {low}-{high}, not {value!r}")
            changes[key] = value
        elif key == "scanner":
            rules = value.get("rules", []) if isinstance(value, dict) else None
            if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
                raise InputError(f"{source}: [[scanner.rules]] must be a list of tables")
            changes["scanner_additions"] = tuple(rules)
        elif key == "pricing":
            if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
                raise InputError(f"{source}: [pricing.\"<model>\"] must be tables of prices",
                                 hint="input, output, cache_write, cache_read: USD per million tokens")
            from .index.pricing import _price

            for model, table in value.items():
                try:
                    _price(model, table, source)
                except ValueError as exc:
                    raise InputError(str(exc)) from None
            changes["pricing"] = tuple(sorted(value.items()))
        else:
            raise InputError(
                f"{source}: unknown setting {key!r}",
                hint="see README 'Configuration' for the settings abcd reads",
            )
    return dataclasses.replace(Config(), **changes)


def _budget(value, source: str) -> DrainBudget:
    if not isinstance(value, dict):
        raise InputError(f"{source}: [drain] must be a table with max_bytes and max_count")
    out = {}
    for key in ("max_bytes", "max_count"):
        v = value.get(key, getattr(Config().drain_budget, key))
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InputError(f"{source}: drain.{key} must be a non-negative integer")
        out[key] = v
    return DrainBudget(**out)


def load_config(config_file: Path) -> Config:
    """Read ``config_file`` if present; defaults when absent. Raises :class:`InputError`."""
    if not os.path.lexists(config_file):
        return Config()
    raw = read_guarded(config_file, CONFIG_CAP, what="config file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{config_file} is not UTF-8 text") from None
    return parse_config(text, source=str(config_file))
