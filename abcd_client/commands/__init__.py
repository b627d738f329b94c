"""CLI verbs. Each module named here defines ``register(app, history, daemon)``."""

NAMES = ("store", "queue", "daemon", "reconstruct", "ingest", "missing")
