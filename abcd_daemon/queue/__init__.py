"""The staging queue: where unredacted text waits, on purpose, as briefly as possible.

- :mod:`.sidecar` — the ``.stage.json`` format (pure).
- :mod:`.stage` — staging one transcript (per-key lock, idempotent).
- :mod:`.staged` — listing what is staged (sidecar, legacy, broken, overdue).
- :mod:`.plan` — drain planning: order and budget (pure).
- :mod:`.drain` — executing a plan entry by entry (capture, remove, quarantine).
- :mod:`.quarantine`, :mod:`.discard`, :mod:`.survey` — the rest of an entry's life.
"""
