"""Small helpers shared by the scanner tests."""

from __future__ import annotations

import json

import msgspec

from abcd_daemon.scanner.engine import Scanner
from abcd_daemon.scanner.provider import PROVIDER_SOURCE


def own_rules(scanner: Scanner) -> Scanner:
    """``scanner`` with our own rules only: a provider rule may find the same example
    in a wider span, which would hide whether OUR rule found it."""
    return Scanner([r for r in scanner.rules if r.source != PROVIDER_SOURCE], scanner._ctx)

GHP = "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"
ANT = "sk-ant-api03-KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFRIBXu"
AWS = "AKIAQYLPMN5HHHFPZAM2"
PEM_BODY = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
    "NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ",
]


def line(text: str, **extra) -> bytes:
    """A Claude-Code-shaped JSONL line whose message text is ``text``."""
    obj = {"type": "user", "message": {"role": "user", "content": text}, "uuid": "u-1", **extra}
    return json.dumps(obj).encode()


def is_json(b: bytes) -> bool:
    try:
        msgspec.json.decode(b)
        return True
    except (msgspec.DecodeError, UnicodeDecodeError):
        return False
