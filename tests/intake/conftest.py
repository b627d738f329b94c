"""Spool entries written the way the shim writes them (header line + payload bytes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from abcd_daemon.config import Config
from abcd_daemon.intake.resolve import LaneResolver
from abcd_daemon.limits import SPOOL_VERSION

T0 = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z


def spool_entry(spool: Path, name: str, payload, *, event: str = "session-end",
                version: int = SPOOL_VERSION, cut_short: bool = False, cwd: str = "") -> Path:
    """Place ``<spool>/new/<name>`` holding a shim header and ``payload``."""
    new = spool / "new"
    new.mkdir(parents=True, exist_ok=True, mode=0o700)
    header = {"abcd_spool": version, "event": event, "received_ns": T0, "cwd": cwd,
              "over_cap": False, "cut_short": cut_short}
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    path = new / name
    path.write_bytes(json.dumps(header).encode() + b"\n" + body)
    os.chmod(path, 0o600)
    return path


@pytest.fixture
def intake(home):
    """``intake(path)`` takes one spooled entry with a real resolver (real git)."""
    from abcd_daemon.intake.take import take

    config = Config(settle_timeout_s=0.05)
    resolver = LaneResolver(home, config)

    def run(path):
        return take(home, str(path), resolver=resolver, config=config, now_ns=T0)

    return run


def failed_reason(home, name: str) -> str:
    return (home.spool_failed / (name + ".reason")).read_text()
