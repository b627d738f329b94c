"""Index build A/B benchmark (a script, not a test): ``.venv/bin/python bench/search_build.py``.

The build of the search index (``index.db.sync`` from an empty database, one thread)
on the seeded corpus of :mod:`bench.search_corpus` is measured in process CPU time,
because the machine is shared and wall time follows the load; even CPU time moves
10-25% with it (other processes evict the caches FTS5's pending-terms hash lives in),
so every comparison alternates its sides, round after round, and reports each side's
best and median. Two comparisons:

- ``code`` (the default): the working tree's code against ``--base`` (a git
  revision, exported with ``git archive`` into a temp dir), each build in a fresh
  interpreter; ``--sqlite pysqlite3`` runs both on the ``pysqlite3-binary`` wheel's
  SQLite instead of the interpreter's (``--sqlite both``: the working tree on each,
  the library the only difference), and ``--pragma "secure_delete=OFF"`` (``;``
  between several) sets connection pragmas on the new side before the build;
- ``fts``: FTS5 table options alone, on the turn texts of a built index, inserted
  into scratch tables in batches of ``--rows`` (no parser, no other table): the
  default table against each ``--variant`` (``content=''``, ``detail=column``, …;
  ``cfg:automerge=0,crisismerge=1000,optimize`` sets FTS5 configuration options and
  runs ``optimize`` after the last batch).

Last line JSON: per side ``{"best": MB per CPU second, "median": …, "runs": [...]}``,
with the corpus and the load. Scratch files live under the corpus's temp directory and
are removed on the way out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import emit_json, median  # noqa: E402

#: One build in a fresh interpreter: argv = code dir, corpus home, sqlite module, pragmas.
_BUILD = r"""
import json, os, sys, time
code, home_dir, lib, pragmas = sys.argv[1:5]
sys.path.insert(0, code)
if lib == "pysqlite3":
    import pysqlite3.dbapi2 as mod
    sys.modules["sqlite3"] = mod
from abcd_daemon.paths import Home
from abcd_daemon.index import db
home = Home(home_dir)
for suffix in ("", "-wal", "-shm"):
    try:
        os.unlink(db.index_path(home) + suffix)
    except FileNotFoundError:
        pass
conn = db.connect(home)
for p in filter(None, pragmas.split(";")):
    conn.execute("PRAGMA " + p)
c = time.process_time()
db.sync(conn, home)
print(json.dumps({"cpu_s": time.process_time() - c}))
"""

#: FTS5 options alone: argv = texts db, scratch db, variant, rows per batch.
_FTS = r"""
import json, os, sqlite3, sys, time
src, path, variant, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
texts = sqlite3.connect(src).execute("SELECT rowid, text FROM turn_text ORDER BY rowid").fetchall()
c = sqlite3.connect(path, isolation_level=None)
for p in ("page_size = 16384", "journal_mode = WAL", "synchronous = NORMAL", "cache_size = -131072"):
    c.execute("PRAGMA " + p)
cfg = variant[4:].split(",") if variant.startswith("cfg:") else []
opts = "" if variant.startswith("cfg:") or not variant else ", " + variant
tok = "" if "tokenize" in opts else ", tokenize = 'unicode61 remove_diacritics 2'"
c.execute(f"CREATE VIRTUAL TABLE t USING fts5(text{tok}{opts})")
c.execute("INSERT INTO t(t, rank) VALUES ('hashsize', 33554432)")
for kv in cfg:
    if "=" in kv:
        c.execute("INSERT INTO t(t, rank) VALUES (?, ?)", (kv.split("=")[0], int(kv.split("=")[1])))
start = time.process_time()
for i in range(0, len(texts), rows):
    c.execute("BEGIN")
    c.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)", texts[i:i + rows])
    c.execute("COMMIT")
if "optimize" in cfg:
    c.execute("INSERT INTO t(t) VALUES ('optimize')")
print(json.dumps({"cpu_s": time.process_time() - start, "mb": sum(len(t) for _, t in texts) / 1e6}))
"""


def run(script: str, *args: str) -> dict:
    res = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(res.stderr[-2000:])
    return json.loads(res.stdout.splitlines()[-1])


def summary(mb: float, cpu: list[float]) -> dict:
    rates = [round(mb / s, 2) for s in cpu]
    return {"best": max(rates), "median": round(median(rates), 2), "runs": rates}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", nargs="?", choices=("code", "fts"), default="code")
    ap.add_argument("--mb", type=float, default=64)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--base", default="main")
    ap.add_argument("--sqlite", choices=("sqlite3", "pysqlite3", "both"), default="sqlite3")
    ap.add_argument("--pragma", default="")
    ap.add_argument("--rows", type=int, default=4000)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--cache", default=tempfile.gettempdir())
    args = ap.parse_args()
    from bench.search_corpus import LANE, ensure_corpus
    from abcd_daemon.store.lane import Lane

    home, info = ensure_corpus(args.seed, args.mb, args.sessions, Path(args.cache),
                               say=lambda s: print(s, file=sys.stderr))
    records = Lane(home, LANE).records
    mb = sum(e.stat().st_size for e in os.scandir(records) if e.name.endswith(".md")) / 1e6
    scratch = Path(tempfile.mkdtemp(prefix="abcd-bench-build-", dir=args.cache))
    try:
        if args.what == "code":
            base = scratch / "base"
            base.mkdir()
            tar = subprocess.run(["git", "-C", str(ROOT), "archive", args.base], capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(base)], input=tar.stdout, check=True)
            if args.sqlite == "both":
                sides = {"sqlite3": (str(ROOT), "sqlite3", ""), "pysqlite3": (str(ROOT), "pysqlite3", "")}
            else:
                sides = {"base": (str(base), args.sqlite, ""), "new": (str(ROOT), args.sqlite, args.pragma)}
            cpu: dict[str, list[float]] = {k: [] for k in sides}
            for _ in range(args.rounds):
                for side, (code, lib, pragmas) in sides.items():
                    cpu[side].append(run(_BUILD, code, str(home.root), lib, pragmas)["cpu_s"])
                    print(f"{side:10s} {mb / cpu[side][-1]:.2f} MB per CPU second", file=sys.stderr)
            out = {side: summary(mb, v) for side, v in cpu.items()}
        else:
            built = home.root / "index.sqlite3"
            if not built.exists():
                run(_BUILD, str(ROOT), str(home.root), "sqlite3", "")
            variants = ["", *args.variant]
            cpu = {v or "default": [] for v in variants}
            text_mb = 0.0
            for _ in range(args.rounds):
                for v in variants:
                    target = scratch / "fts.db"
                    for suffix in ("", "-wal", "-shm"):
                        Path(str(target) + suffix).unlink(missing_ok=True)
                    r = run(_FTS, str(built), str(target), v, str(args.rows))
                    text_mb = r["mb"]
                    cpu[v or "default"].append(r["cpu_s"])
                    print(f"{v or 'default':40s} {r['mb'] / r['cpu_s']:.2f} MB of text per CPU second", file=sys.stderr)
            out = {v: summary(text_mb, s) for v, s in cpu.items()}
            mb = text_mb
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    emit_json(dict(out, what=args.what, mb=round(mb, 1), records=info["records"], rounds=args.rounds,
                   load=round(os.getloadavg()[0], 2)))


if __name__ == "__main__":
    main()
