"""The planner: identity, presence, lineage, order (pure; ownership injected)."""

import json

from abcd_daemon.ingest.corpus import CorpusIndex
from abcd_daemon.ingest.facts import facts_of
from abcd_daemon.ingest.layout import Found
from abcd_daemon.ingest.owner import AMBIGUOUS, OWNED, UNOWNED, Owner
from abcd_daemon.ingest.plan import Candidate, plan_ingest
from abcd_daemon.ingest.report import IngestReport
from abcd_daemon.intake.harness import HarnessLineage

from .conftest import claude_line

A = "a" * 40
OWNED_A = Owner(status=OWNED, root_sha=A, repo_root="/repo", via="cwd")


def cand(path, *, session="s1", agent="", layout=None, lines=None, lineage=None):
    lines = lines if lines is not None else [claude_line(session, "/repo", i, agent=agent) for i in range(2)]
    raw = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    layout = layout or ("subagents" if agent else "main")
    found = Found(path=path, kind="subagent" if agent else "main", layout=layout,
                  session_id="" if layout == "legacy-agent" else session, agent_id=agent,
                  size=len(raw), mtime_ns=0)
    return Candidate(found=found, facts=facts_of(raw), lineage=lineage)


def plan(cands, *, owner=OWNED_A, index=None, into_lanes=None):
    return plan_ingest(cands, index=index or CorpusIndex(), owner_of=lambda c, s: owner,
                       into_lanes=into_lanes, report=IngestReport(roots=[]))


def test_main_threads_are_staged_before_subagents():
    p = plan([cand("/p/s1/subagents/agent-a1.jsonl", agent="a1"), cand("/p/s2.jsonl", session="s2"),
              cand("/p/s1.jsonl")])
    assert [a.path for a in p.actions] == ["/p/s1.jsonl", "/p/s2.jsonl", "/p/s1/subagents/agent-a1.jsonl"]


def test_empty_files_are_counted_and_not_staged():
    p = plan([cand("/p/s1.jsonl", lines=[])])
    assert p.actions == [] and p.report.empty == 1 and p.report.skipped == []


def test_an_older_layout_subagent_takes_its_session_from_its_lines():
    [action] = plan([cand("/p/agent-a1.jsonl", session="sess-9", agent="a1", layout="legacy-agent")]).actions
    assert (action.meta.session_id, action.meta.agent_id) == ("sess-9", "a1")


def test_an_older_layout_subagent_naming_two_sessions_is_skipped():
    lines = [claude_line("s1", "/r", 0, agent="a1"), claude_line("s2", "/r", 1, agent="a1")]
    p = plan([cand("/p/agent-a1.jsonl", agent="a1", layout="legacy-agent", lines=lines)])
    assert [x.reason for x in p.report.skipped] == ["ambiguous-session"]


def test_a_subagent_whose_lines_name_another_agent_is_skipped():
    lines = [claude_line("s1", "/r", 0, agent="a1"), claude_line("s1", "/r", 1, agent="zz")]
    p = plan([cand("/p/s1/subagents/agent-a1.jsonl", agent="a1", lines=lines)])
    assert [x.reason for x in p.report.skipped] == ["ambiguous-agent-id"]


def test_a_record_of_the_same_bytes_makes_a_transcript_present_without_asking_for_an_owner():
    c = cand("/p/s1.jsonl")
    index = CorpusIndex()
    index.add_record("f" * 40, "s1", "", c.facts.sha256)
    p = plan([c], index=index, owner=None)
    assert p.actions == [] and p.report.present == 1 and p.present[0].root_sha == "f" * 40


def test_with_into_only_a_record_in_that_lane_counts_as_present():
    c = cand("/p/s1.jsonl")
    index = CorpusIndex()
    index.add_record("f" * 40, "s1", "", c.facts.sha256)
    assert len(plan([c], index=index, into_lanes=(A,)).actions) == 1


def test_a_longer_transcript_than_the_recorded_one_is_new():
    short = cand("/p/s1.jsonl")
    index = CorpusIndex()
    index.add_record(A, "s1", "", short.facts.sha256)
    longer = cand("/p/s1.jsonl", lines=[claude_line("s1", "/repo", i) for i in range(3)])
    assert len(plan([longer], index=index).actions) == 1


def test_a_staged_copy_with_identical_bytes_is_present(tmp_path):
    c = cand("/p/s1.jsonl")
    staged = tmp_path / "x.raw"
    staged.write_bytes(b"".join(json.dumps(claude_line("s1", "/repo", i)).encode() + b"\n" for i in range(2)))
    index = CorpusIndex()
    index.add_staged(A, "s1", "", str(staged), staged.stat().st_size)
    assert plan([c], index=index).report.present == 1


def test_unowned_is_listed_and_ambiguous_is_skipped():
    unowned = plan([cand("/p/s1.jsonl")], owner=Owner(status=UNOWNED, reason="no repository at /x"))
    assert [(x.reason, x.detail) for x in unowned.report.unowned] == [("no-repository", "no repository at /x")]
    ambiguous = plan([cand("/p/s1.jsonl")], owner=Owner(status=AMBIGUOUS, reason="two"))
    assert [x.reason for x in ambiguous.report.skipped] == ["ambiguous-owner"]


def test_a_subagent_without_a_spawn_depth_is_unattributed_with_its_meta_agent_type():
    lineage = HarnessLineage(agent_type="general-purpose", found=True)
    [a] = plan([cand("/p/s1/subagents/agent-a1.jsonl", agent="a1", lineage=lineage)]).actions
    assert (a.meta.agent_type, a.meta.spawn_attribution, a.meta.lineage_source) == (
        "general-purpose", "unattributed", "ingest")
    assert (a.meta.parent_agent_id, a.meta.spawn_depth, a.meta.spawn_tool_use_id) == ("", 0, "")


def test_a_subagent_whose_meta_carries_a_spawn_depth_is_attributed_by_the_sidecar():
    lineage = HarnessLineage(agent_type="Plan", parent_agent_id="a0", spawn_depth=2,
                             spawn_tool_use_id="toolu_1", attribution="sidecar", found=True)
    [a] = plan([cand("/p/s1/subagents/agent-a1.jsonl", agent="a1", lineage=lineage)]).actions
    assert (a.meta.spawn_attribution, a.meta.parent_agent_id, a.meta.spawn_depth,
            a.meta.spawn_tool_use_id) == ("sidecar", "a0", 2, "toolu_1")


def test_an_agent_type_from_the_lines_is_used_without_a_meta_and_dropped_if_unusable():
    lines = [dict(claude_line("s1", "/r", 0, agent="a1"), agentType="Explore")]
    [a] = plan([cand("/p/s1/subagents/agent-a1.jsonl", agent="a1", lines=lines)]).actions
    assert a.meta.agent_type == "Explore"
    lines = [dict(claude_line("s1", "/r", 0, agent="a1"), agentType="two\nlines")]
    p = plan([cand("/p/s1/subagents/agent-a1.jsonl", agent="a1", lines=lines)])
    assert p.actions[0].meta.agent_type == "" and [w.reason for w in p.report.warnings] == ["lineage"]


def test_a_main_thread_carries_ingest_lineage_and_no_attribution():
    [a] = plan([cand("/p/s1.jsonl")]).actions
    assert (a.meta.lineage_source, a.meta.spawn_attribution, a.meta.agent_id) == ("ingest", "", "")


def test_two_files_for_one_key_stage_once():
    same = [cand("/p1/s1.jsonl"), cand("/p2/s1.jsonl")]
    p = plan(same)
    assert len(p.actions) == 1 and p.report.present == 1
    longer = cand("/p3/s1.jsonl", lines=[claude_line("s1", "/repo", i) for i in range(3)])
    p = plan([cand("/p1/s1.jsonl"), longer])
    assert [a.path for a in p.actions] == ["/p3/s1.jsonl"]
    assert [(x.path, x.reason) for x in p.report.skipped] == [("/p1/s1.jsonl", "same-key")]


def test_a_subagent_a_hook_staged_keeps_the_hook_s_lineage_when_ingest_restages_it_grown():
    from abcd_daemon.store.meta import CaptureMeta

    index = CorpusIndex()
    index.add_hook_lineage(CaptureMeta(
        session_id="s1", agent_id="a1", agent_type="Explore", lineage_source="hook",
        spawn_attribution="sidecar", spawn_depth=2, parent_agent_id="a0", spawn_tool_use_id="toolu_1"))
    [action] = plan([cand("/p/s1/subagents/agent-a1.jsonl", agent="a1",
                          lineage=HarnessLineage(agent_type="general-purpose"))], index=index).actions
    assert (action.meta.lineage_source, action.meta.agent_type, action.meta.spawn_depth,
            action.meta.parent_agent_id) == ("hook", "Explore", 2, "a0")


def test_a_stored_hook_lineage_that_no_longer_validates_falls_back_to_the_file_s():
    from abcd_daemon.store.meta import CaptureMeta

    index = CorpusIndex()  # a parent id masked by redaction is no id at all
    index.add_hook_lineage(CaptureMeta(session_id="s1", agent_id="a1", lineage_source="hook",
                                       spawn_attribution="sidecar", parent_agent_id="[redacted]"))
    [action] = plan([cand("/p/s1/subagents/agent-a1.jsonl", agent="a1")], index=index).actions
    assert (action.meta.lineage_source, action.meta.spawn_attribution) == ("ingest", "unattributed")


def test_a_sidechain_file_named_like_a_main_thread_is_filed_as_the_agent_its_lines_name():
    # Every line says isSidechain, one agentId and another session: follow the lines.
    lines = [claude_line("parent-session", "/repo", i, agent="a5ide") for i in range(3)]
    p = plan([cand("/p/odd-name.jsonl", session="odd-name", lines=lines)])
    [action] = p.actions
    assert (action.meta.session_id, action.meta.agent_id) == ("parent-session", "a5ide")
    assert action.meta.spawn_attribution == "unattributed"
    [warning] = p.report.warnings
    assert (warning.reason, warning.path, warning.session_id, warning.agent_id) == (
        "sidechain-file", "/p/odd-name.jsonl", "parent-session", "a5ide")
    assert "every line says it is sub-agent a5ide of session parent-session" in warning.detail


def test_a_main_thread_carrying_sidechain_lines_among_its_own_stays_a_main_thread():
    # 1.0.x wrote a Task's sidechain lines into the main file beside its own.
    for flag in (False, None):  # written false, or (older) not written at all
        lines = [claude_line("s1", "/repo", 0), claude_line("s1", "/repo", 1, agent="a1")]
        if flag is not None:
            lines[0]["isSidechain"] = flag
        [action] = plan([cand("/p/s1.jsonl", lines=lines)]).actions
        assert (action.meta.session_id, action.meta.agent_id) == ("s1", "")
