"""abcd: a redacted per-repository corpus of AI coding-agent sessions (the daemon and its core)."""

__version__ = "0.1.0"
