"""Ingest, watch and migrate: recovering transcripts already on disk into the right
repository's lane, capturing harnesses that have no hooks, and moving the older
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
- :mod:`.watch` — the watchfiles loop over watch roots, and the daemon's task.
- :mod:`.migrate` — the legacy-layout migration.
"""

from .request import drain_lanes, ingest_request
from .run import ingest, ingest_file, parse_since

__all__ = ["drain_lanes", "ingest", "ingest_file", "ingest_request", "parse_since"]
