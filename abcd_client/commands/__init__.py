"""CLI verbs. Each module named here defines ``register(app, history, daemon)``."""

NAMES = ("store", "queue", "failed", "daemon", "reconstruct", "ingest", "redact", "rescan", "missing", "search", "usage")
