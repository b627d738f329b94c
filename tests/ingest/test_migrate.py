"""Migrating ABCD_HOME/history/<sha>/{transcripts,staging} into lanes."""

import errno
import os
import stat

import pytest

from abcd_daemon.ingest import migrate as mig
from abcd_daemon.ingest.migrate import TOMBSTONE, migrate
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records

from .conftest import T0
from .test_go_corpus import go_record

SHA = "c" * 40


def legacy(home, sha=SHA, *, records=3, staged=2):
    """A legacy layout with Go-shaped records and staged files (one with a sidecar)."""
    base = home.root / "history" / sha
    (base / "transcripts").mkdir(parents=True)
    (base / "staging").mkdir()
    (home.root / "history" / "index.json").write_text("{}")  # another tool's registry
    (base / "meta.json").write_text('{"name": "proj"}')
    for i in range(records):
        (base / "transcripts" / f"2026010{i}T000000.000000000Z-sess-{i}.md").write_bytes(
            go_record(schema=1 + i % 3, session=f"sess-{i}", root=sha, body=f"line {i}\n"))
    for i in range(staged):
        (base / "staging" / f"2026010{i}T000000.000000000Z-raw-{i}.raw").write_bytes(b'{"n": %d}\n' % i)
    if staged:
        (base / "staging" / "20260100T000000.000000000Z-raw-0.stage.json").write_text(
            '{"schema": 1, "session_id": "raw-0", "staged_at": "2026-01-01T00:00:00Z", '
            '"lineage_source": "hook"}\n')
    return base


def tree(path):
    return {os.path.relpath(os.path.join(d, f), path): open(os.path.join(d, f), "rb").read()
            for d, _, files in os.walk(path) for f in files}


def test_migrate_dry_run_changes_nothing_and_reports_what_it_would_move(home, config):
    base = legacy(home)
    before = tree(home.root)
    report = migrate(home, apply=False, config=config, now_ns=T0)
    assert tree(home.root) == before and not home.transcripts.exists()
    [lane] = report.lanes
    assert (lane.records, lane.staged) == (3, 3)
    assert [i.action for i in lane.items] == ["move"] * 6 and lane.left == []
    assert not (base / TOMBSTONE).exists()


def test_migrate_moves_every_file_then_writes_the_tombstone(home, config):
    base = legacy(home)
    originals = tree(base)
    report = migrate(home, apply=True, config=config, now_ns=T0)
    lane = Lane(home, SHA)
    [result] = report.lanes
    assert result.moved == 6 and result.tombstoned and result.left == []
    assert sorted(os.listdir(base / "transcripts")) == [] and sorted(os.listdir(base / "staging")) == []
    for rel, data in originals.items():
        if rel.startswith("transcripts/"):
            assert (lane.records / rel.split("/")[1]).read_bytes() == data
        elif rel.startswith("staging/"):
            assert (lane.staging / rel.split("/")[1]).read_bytes() == data
    assert all(stat.S_IMODE(os.stat(lane.records / n).st_mode) == 0o600 for n in os.listdir(lane.records)
               if n.endswith(".md"))
    assert "Moved 2026-01-01T00:00:00Z" in (base / TOMBSTONE).read_text()
    assert (base / "meta.json").exists() and (home.root / "history" / "index.json").exists()
    # the moved corpus reads as it is: Go schema 1-3 records, and the staged queue
    assert sorted(r.session_id for r in list_records(lane)) == ["sess-0", "sess-1", "sess-2"]
    staged = {e.session_id: e for e in list_staged(lane, now_ns=T0, ttl_s=1e12)}
    assert staged["raw-0"].lineage_source == "hook" and staged["raw-1"].legacy


def test_migrate_interrupted_half_way_then_rerun_ends_complete_with_no_duplicates(home, config, monkeypatch):
    base = legacy(home, records=4, staged=2)
    originals = {os.path.basename(k): v for k, v in tree(base).items()
                 if k.startswith(("transcripts/", "staging/"))}
    real_remove = mig._remove
    removed = []

    def killed_on_the_fourth(path):
        if len(removed) == 3:  # the 4th file is linked in place, its old name not yet removed
            raise KeyboardInterrupt
        real_remove(path)
        removed.append(path)

    monkeypatch.setattr(mig, "_remove", killed_on_the_fourth)
    with pytest.raises(KeyboardInterrupt):
        migrate(home, apply=True, config=config, now_ns=T0)
    assert not (base / TOMBSTONE).exists()
    monkeypatch.setattr(mig, "_remove", real_remove)
    report = migrate(home, apply=True, config=config, now_ns=T0)
    [result] = report.lanes
    assert result.tombstoned and result.left == [] and result.duplicates == 1
    lane = Lane(home, SHA)
    moved = {n: (lane.records / n).read_bytes() for n in os.listdir(lane.records) if n.endswith(".md")}
    moved.update({n: (lane.staging / n).read_bytes() for n in os.listdir(lane.staging)
                  if n.endswith((".raw", ".stage.json"))})
    assert moved == originals
    assert os.listdir(base / "transcripts") == [] and os.listdir(base / "staging") == []


def test_migrate_leaves_a_conflicting_file_and_writes_no_tombstone(home, config):
    base = legacy(home, records=2, staged=0)
    lane = Lane(home, SHA).ensure("records")
    name = sorted(os.listdir(base / "transcripts"))[0]
    (lane.records / name).write_bytes(b"something else\n")
    report = migrate(home, apply=True, config=config, now_ns=T0)
    [result] = report.lanes
    assert [(i.action, os.path.basename(i.source)) for i in result.left] == [("conflict", name)]
    assert (base / "transcripts" / name).exists() and (lane.records / name).read_bytes() == b"something else\n"
    assert not (base / TOMBSTONE).exists()


def test_migrate_leaves_a_symlink_in_place(home, config, tmp_path):
    base = legacy(home, records=1, staged=0)
    (tmp_path / "x.md").write_text("x")
    os.symlink(tmp_path / "x.md", base / "transcripts" / "link.md")
    [result] = migrate(home, apply=True, config=config, now_ns=T0).lanes
    assert [i.action for i in result.left] == ["not-regular"] and not result.tombstoned
    assert os.path.islink(base / "transcripts" / "link.md")


def test_migrate_is_a_repeatable_no_op_after_the_tombstone(home, config):
    legacy(home)
    migrate(home, apply=True, config=config, now_ns=T0)
    again = migrate(home, apply=True, config=config, now_ns=T0 + 1)
    assert [(lane.already_moved, lane.moved) for lane in again.lanes] == [(True, 0)]


def test_migrate_copies_across_filesystems_without_overwriting(home, config, monkeypatch):
    base = legacy(home, records=2, staged=0)
    names = set(os.listdir(base / "transcripts"))
    real_link = os.link

    def cross_device(src, dst, **kw):
        if "/history/" in str(src):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_link(src, dst, **kw)

    monkeypatch.setattr(mig.os, "link", cross_device)
    [result] = migrate(home, apply=True, config=config, now_ns=T0).lanes
    assert result.moved == 2 and result.tombstoned
    lane = Lane(home, SHA)
    assert set(os.listdir(lane.records)) == names | {".lock"}  # no temp file left behind
    assert os.listdir(base / "transcripts") == []


def test_migrate_without_a_legacy_layout_reports_nothing(home, config):
    assert migrate(home, apply=True, config=config, now_ns=T0).lanes == []
