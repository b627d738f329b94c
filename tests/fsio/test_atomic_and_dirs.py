"""Atomic writes and owner-only directory chains."""

import os
import stat

import pytest

from abcd_daemon.errors import StorePathError
from abcd_daemon.fsio.atomic import TEMP_PREFIX, atomic_write, sweep_temp_files
from abcd_daemon.fsio.dirs import ensure_chain


def test_atomic_write_creates_owner_only_file(tmp_path):
    p = tmp_path / "rec.md"
    atomic_write(p, b"hello")
    assert p.read_bytes() == b"hello"
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    assert not [n for n in os.listdir(tmp_path) if n.startswith(TEMP_PREFIX)]


def test_atomic_write_replaces_the_old_content_whole(tmp_path):
    p = tmp_path / "f"
    atomic_write(p, b"old")
    atomic_write(p, b"new content")
    assert p.read_bytes() == b"new content"


def test_atomic_write_refuses_a_symlink_planted_at_the_leaf(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    leaf = tmp_path / "rec.md"
    leaf.symlink_to(victim)
    with pytest.raises(StorePathError):
        atomic_write(leaf, b"x")
    assert victim.read_text() == "keep"


def test_failed_write_leaves_previous_file_and_no_temp(tmp_path, monkeypatch):
    p = tmp_path / "f"
    atomic_write(p, b"previous")

    def boom(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", boom)
    with pytest.raises(OSError):
        atomic_write(p, b"next")
    monkeypatch.undo()
    assert p.read_bytes() == b"previous"
    assert not [n for n in os.listdir(tmp_path) if n.startswith(TEMP_PREFIX)]


def test_sweep_removes_leftover_temp_files_only(tmp_path):
    (tmp_path / f"{TEMP_PREFIX}abc").write_text("partial")
    (tmp_path / "keep.md").write_text("whole")
    assert sweep_temp_files(tmp_path) == 1
    assert os.listdir(tmp_path) == ["keep.md"]


def test_chain_is_created_one_level_at_a_time_owner_only(tmp_path):
    leaf = ensure_chain(tmp_path / "home", "transcripts", "a" * 40, "records")
    for level in (tmp_path / "home", tmp_path / "home" / "transcripts", leaf):
        assert stat.S_IMODE(level.stat().st_mode) == 0o700


def test_chain_refuses_a_symlinked_level(tmp_path):
    home = tmp_path / "home"
    ensure_chain(home)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "transcripts").symlink_to(elsewhere)
    with pytest.raises(StorePathError) as err:
        ensure_chain(home, "transcripts", "b" * 40)
    assert "not a real directory" in str(err.value)
    assert os.listdir(elsewhere) == []


def test_chain_refuses_a_file_in_place_of_a_directory(tmp_path):
    home = tmp_path / "home"
    ensure_chain(home)
    (home / "transcripts").write_text("not a dir")
    with pytest.raises(StorePathError):
        ensure_chain(home, "transcripts")


def test_chain_keeps_an_existing_levels_mode(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o750)
    os.chmod(home, 0o750)
    ensure_chain(home, "x")
    assert stat.S_IMODE(home.stat().st_mode) == 0o750
