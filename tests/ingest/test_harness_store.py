"""The harness store's facts: where it is, what abcd follows, how long the harness keeps
a transcript."""

import json

import pytest

from abcd_daemon.config import parse_config
from abcd_daemon.errors import InputError
from abcd_daemon.ingest.harness_store import (DAY_NS, Retention, config_dir, config_dir_of,
                                              coverage_roots, days_left, followed_roots,
                                              projects_root, retention_days)


def test_the_store_is_claude_config_dir_s_projects_folder_else_home_dot_claude():
    assert projects_root({"CLAUDE_CONFIG_DIR": "/cfg", "HOME": "/u"}) == "/cfg/projects"
    assert projects_root({"CLAUDE_CONFIG_DIR": "", "HOME": "/u"}) == "/u/.claude/projects"
    assert config_dir({"HOME": "/u/"}) == "/u/.claude"


def test_tests_never_see_the_developer_s_store(claude_dir):
    assert projects_root() == str(claude_dir / "projects")


def test_the_harness_store_is_followed_unless_switched_off_and_always_accounted_for():
    env = {"CLAUDE_CONFIG_DIR": "/cfg"}
    on = parse_config('watch_roots = ["/other"]\n')
    off = parse_config('watch_roots = ["/other"]\nwatch_harness_store = false\n')
    assert followed_roots(on, env) == ["/cfg/projects", "/other"]
    assert followed_roots(off, env) == ["/other"]
    assert coverage_roots(off, env) == ["/cfg/projects", "/other"]


def test_a_switch_that_is_not_a_boolean_is_refused_by_name():
    with pytest.raises(InputError, match="watch_harness_store must be true or false"):
        parse_config('watch_harness_store = "no"\n')


@pytest.mark.parametrize("settings, days", [
    ({"cleanupPeriodDays": 7}, 7), ({"cleanupPeriodDays": 0}, 0), ({}, 30),
    ({"cleanupPeriodDays": "7"}, 30), ({"cleanupPeriodDays": -1}, 30), ({"cleanupPeriodDays": True}, 30),
    ([1, 2], 30), (None, 30),
])
def test_retention_is_cleanup_period_days_when_usable_else_thirty(tmp_path, settings, days):
    if settings is not None:
        (tmp_path / "settings.json").write_text(json.dumps(settings))
    assert retention_days(str(tmp_path)) == days


def test_unparsable_settings_mean_the_harness_default(tmp_path):
    (tmp_path / "settings.json").write_text("{not json")
    assert retention_days(str(tmp_path)) == 30


def test_days_left_count_started_days_and_stop_at_zero():
    now = 100 * DAY_NS
    assert days_left(now, now, 30) == 30
    assert days_left(now - 29 * DAY_NS - 1, now, 30) == 1
    assert days_left(now - 30 * DAY_NS, now, 30) == 0
    assert days_left(now - 45 * DAY_NS, now, 30) == 0


def test_a_transcript_s_store_is_the_config_dir_above_its_projects_folder(tmp_path):
    cfg = tmp_path / "elsewhere"
    (cfg / "projects").mkdir(parents=True)
    (cfg / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 3}))
    sub = cfg / "projects" / "-r" / "s1" / "subagents" / "agent-a1.jsonl"
    assert config_dir_of(str(sub)) == str(cfg)
    assert config_dir_of("/somewhere/s1.jsonl") is None
    retention = Retention()
    assert retention.days_left(str(sub), 10 * DAY_NS, 11 * DAY_NS) == 2
    assert retention.days_left("/somewhere/s1.jsonl", 0, 0) is None
