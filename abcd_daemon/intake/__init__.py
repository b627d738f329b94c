"""Intake: turning spooled hook payloads into staged transcripts (DESIGN §3.2).

- :mod:`.spool` — the spool directory: listing in arrival order, parsing a spooled file,
  moving an unusable one to ``spool/failed/`` with its reason.
- :mod:`.payload` — validating a harness payload (ids, scalars).
- :mod:`.harness` — reading the transcript (settling) and its lineage sidecar.
- :mod:`.resolve` — which lane a payload belongs to (cwd, then session note).
- :mod:`.take` — one spooled payload, end to end (synchronous; the daemon runs it in a
  worker thread, one at a time, in arrival order).
"""
