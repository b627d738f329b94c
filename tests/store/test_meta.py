"""Lineage metadata rules: what a capture or a stage may claim."""

import pytest

from abcd_daemon.errors import InputError
from abcd_daemon.store.meta import CaptureMeta


def test_a_main_thread_needs_only_a_session():
    CaptureMeta(session_id="5a9221e2-aaaa").validate()


@pytest.mark.parametrize("sid", ["", "a/b", "..", ".hidden", "x" * 300, "a\nb", "a b", "ü"])
def test_unsafe_session_ids_are_refused(sid):
    with pytest.raises(InputError, match="not a usable id"):
        CaptureMeta(session_id=sid).validate()


def test_capture_rejects_a_malformed_lineage_scalar():
    with pytest.raises(InputError, match="line break"):
        CaptureMeta(session_id="s", agent_id="a1", agent_type="x\nschema: 9",
                    spawn_attribution="unattributed").validate()


def test_subagent_capture_requires_a_spawn_attribution():
    with pytest.raises(InputError, match="spawn_attribution"):
        CaptureMeta(session_id="s", agent_id="a1").validate()


def test_main_thread_carries_no_attribution():
    with pytest.raises(InputError):
        CaptureMeta(session_id="s", spawn_attribution="sidecar").validate()


def test_unknown_spawn_is_distinguishable_from_no_parent():
    # unattributed: nothing known about the spawn; sidecar at depth 1: spawned by main.
    CaptureMeta(session_id="s", agent_id="a1", spawn_attribution="unattributed").validate()
    CaptureMeta(session_id="s", agent_id="a1", spawn_attribution="sidecar", spawn_depth=1).validate()
    with pytest.raises(InputError, match="unattributed"):
        CaptureMeta(session_id="s", agent_id="a1", spawn_attribution="unattributed",
                    spawn_depth=1).validate()


def test_vocabularies_are_closed():
    with pytest.raises(InputError):
        CaptureMeta(session_id="s", lineage_source="guess").validate()
    with pytest.raises(InputError):
        CaptureMeta(session_id="s", source_kind="weird").validate()
