"""Sweeping the spools: only directories this uid alone controls, entries read by descriptor."""

from __future__ import annotations

import os

from abcd_daemon.intake.spool import list_spool, opened_new, read_item, spool_locations

from .conftest import spool_entry


def test_the_home_spool_and_both_fallbacks_are_swept_in_arrival_order(home, tmp_path):
    env = {"ABCD_HOME": str(home.root), "ABCD_SOCKET": str(tmp_path / "run" / "d.sock"),
           "TMPDIR": str(tmp_path / "tmp")}
    spools = spool_locations(home, env)
    assert spools == [str(home.spool), str(tmp_path / "run" / "spool"),
                      str(tmp_path / "tmp" / f"abcd-{os.geteuid()}" / "spool")]
    for i, spool in enumerate(reversed(spools)):
        spool_entry(tmp_path / spool, f"{i:03d}.json", {"session_id": "s"})
    listing = list_spool(spools)
    assert [os.path.basename(p) for p in listing.paths] == ["000.json", "001.json", "002.json"]
    assert listing.refused == []


def test_a_fallback_spool_another_user_planted_is_refused_and_never_listed(home, tmp_path, other_user):
    planted = tmp_path / "tmp" / f"abcd-{os.geteuid()}"
    forged = spool_entry(planted / "spool", "000-forged.json", {"session_id": "s"})
    for path in (planted, planted / "spool", planted / "spool" / "new", forged):
        other_user.owns(path)
    listing = list_spool([str(home.spool), str(planted / "spool")])
    assert listing.paths == []
    [refused] = listing.refused
    assert refused.path == str(planted / "spool")
    assert refused.reason.startswith(f"{planted} is owned by uid {other_user.uid}, not by this user")
    assert forged.exists()  # left exactly where it was planted


def test_a_group_writable_spool_is_refused_with_its_mode(home, tmp_path):
    spool_entry(tmp_path / "run" / "spool", "000.json", {"session_id": "s"})
    os.chmod(tmp_path / "run" / "spool", 0o775)
    listing = list_spool([str(tmp_path / "run" / "spool")])
    assert listing.paths == []
    assert listing.refused[0].reason.startswith(
        f"{tmp_path}/run/spool is group- or world-writable (mode 0o775); refusing it")


def test_a_spool_new_that_is_a_symlink_is_refused_and_what_it_points_at_is_untouched(home, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    (victim / "precious.json").write_text("{}")
    (tmp_path / "run" / "spool").mkdir(parents=True, mode=0o700)
    (tmp_path / "run" / "spool" / "new").symlink_to(victim)
    listing = list_spool([str(tmp_path / "run" / "spool")])
    assert listing.paths == []
    assert listing.refused[0].reason.startswith(f"{tmp_path}/run/spool/new is a symlink")
    assert os.listdir(victim) == ["precious.json"]


def test_a_missing_spool_is_empty_not_refused(home, tmp_path):
    listing = list_spool([str(tmp_path / "never" / "spool")])
    assert listing.paths == [] and listing.refused == []


def test_an_unknown_header_version_is_refused_saying_which_versions(home):
    path = spool_entry(home.spool, "000.json", {"session_id": "s"}, version=2)
    with opened_new(str(home.spool)) as fd:
        item = read_item(fd, str(path))
    assert item.header is None
    assert item.error.startswith("the spooled file's header is version 2, and this daemon reads "
                                 "version 1 only")
