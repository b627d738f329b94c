"""Ingest, watch and migrate: recovering transcripts already on disk into the right
repository's lane, following harness stores so no session depends on a hook firing
(and saying which transcripts are not stored yet), and moving the older
``ABCD_HOME/history/<sha>/transcripts`` layout into lanes.

- :mod:`.layout` — recognising transcripts by path (both Claude Code layouts and the
  JSONL store harness's); the directory walk.
- :mod:`.facts` — what a transcript's bytes say: digest, harness, cwds, ids (pure).
- :mod:`.corpus` — what the store already holds (records, staged entries, notes).
- :mod:`.owner` — the ownership ladder (which repository owns a transcript).
- :mod:`.plan` — deciding what to stage (pure).
- :mod:`.run` — ``ingest()`` / ``ingest_file()``: read, plan, then execute.
- :mod:`.execute` — staging a plan (concurrent, spine first).
- :mod:`.request` — ``ingest_request()``: an ingest as a front door asks for it (stage,
  then drain what was staged); the daemon's handler and the CLI's in-process path.
- :mod:`.report` — the report Structs and the per-repository summary.
- :mod:`.settle` — the settle tracker (pure): which watched files are quiet.
- :mod:`.watch` — the settling core and the watchfiles watch of a root.
- :mod:`.live` — sessions a hook named, outside every root, polled.
- :mod:`.harness_store` — the harness's store: where it is, how long it keeps a file.
- :mod:`.ledger` — what the daemon last did with each harness transcript.
- :mod:`.catchup` — start-up and SessionStart catch-ups (sync).
- :mod:`.follow` — the daemon's follow task: all of the above, wired.
- :mod:`.missing` — coverage: the harness transcripts not stored yet, and why.
- :mod:`.migrate` — the legacy-layout migration.
"""

from .request import drain_lanes, ingest_request
from .run import ingest, ingest_file, parse_since

__all__ = ["drain_lanes", "ingest", "ingest_file", "ingest_request", "parse_since"]
