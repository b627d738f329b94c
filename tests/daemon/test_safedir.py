"""Directories abcd owns are created owner-only or verified, level by level, by descriptor."""

from __future__ import annotations

import os
import stat

import pytest

from abcd_daemon import safedir


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_missing_chain_is_created_owner_only_and_its_leaf_descriptor_is_returned(tmp_path):
    fd = safedir.open_spool(str(tmp_path / "abcd-1" / "spool"), ("new",), create=True)
    try:
        assert os.path.samestat(os.fstat(fd), os.stat(tmp_path / "abcd-1" / "spool" / "new"))
    finally:
        os.close(fd)
    for level in ("abcd-1", "abcd-1/spool", "abcd-1/spool/new"):
        assert _mode(tmp_path / level) == 0o700


def test_an_existing_directory_that_only_its_owner_can_write_is_accepted_and_keeps_its_mode(tmp_path):
    first = tmp_path / "first"
    first.mkdir()
    os.chmod(first, 0o755)
    os.close(safedir.open_spool(str(first / "spool"), create=True))
    assert _mode(first) == 0o755  # verified, never chmodded


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o1777])
def test_a_group_or_world_writable_level_is_refused_and_nothing_is_created_below_it(tmp_path, mode):
    first = tmp_path / "first"
    first.mkdir()
    os.chmod(first, mode)
    with pytest.raises(safedir.Refused) as err:
        safedir.open_spool(str(first / "spool"), ("new",), create=True)
    assert str(err.value).startswith(f"{first} is group- or world-writable (mode {oct(mode)})")
    assert os.listdir(first) == []
    assert _mode(first) == mode


def test_a_symlinked_level_is_refused_and_its_target_untouched(tmp_path):
    target = tmp_path / "victim"
    target.mkdir(mode=0o700)
    (tmp_path / "first").mkdir(mode=0o700)
    (tmp_path / "first" / "spool").symlink_to(target)
    with pytest.raises(safedir.Refused) as err:
        safedir.open_spool(str(tmp_path / "first" / "spool"), ("new",), create=True)
    assert err.value.why == "is a symlink"
    assert os.listdir(target) == []


def test_a_file_in_place_of_a_level_is_refused(tmp_path):
    (tmp_path / "first").write_text("not a directory")
    with pytest.raises(safedir.Refused) as err:
        safedir.open_spool(str(tmp_path / "first" / "spool"), create=True)
    assert err.value.why == "is not a directory"


def test_a_missing_level_without_create_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        safedir.open_spool(str(tmp_path / "nothing" / "spool"), ("new",))


def test_a_level_another_user_owns_is_refused_naming_the_owner(tmp_path, other_user):
    planted = tmp_path / "abcd-0"
    planted.mkdir(mode=0o700)
    other_user.owns(planted)
    with pytest.raises(safedir.Refused) as err:
        safedir.open_spool(str(planted / "spool"), ("new",), create=True)
    assert err.value.why == f"is owned by uid {other_user.uid}, not by this user (uid {os.geteuid()})"
    assert os.listdir(planted) == []


def test_problem_is_the_one_rule_the_store_chains_apply_too(tmp_path):
    from abcd_daemon.errors import StorePathError
    from abcd_daemon.fsio.dirs import ensure_chain

    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o775)
    with pytest.raises(StorePathError) as err:
        ensure_chain(home, "transcripts")
    assert "is group- or world-writable (mode 0o775); refusing" in str(err.value)
    assert not (home / "transcripts").exists()
