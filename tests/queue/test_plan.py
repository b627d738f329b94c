"""Drain planning: order and budget (pure)."""

from abcd_daemon.config import DrainBudget
from abcd_daemon.queue.plan import drain_order, plan_pass
from abcd_daemon.queue.staged import StagedEntry


def entry(name, *, agent="", overdue=False, size=100, error=""):
    return StagedEntry(root_sha="e" * 40, name=name, path="/x/" + name, bytes=size, session_id="s",
                       agent_id=agent, overdue=overdue, error=error)


def test_drain_takes_main_thread_first():
    order = drain_order([entry("1-a1", agent="a1"), entry("2-a2", agent="a2"), entry("3-s")])
    assert [e.name for e in order] == ["3-s", "1-a1", "2-a2"]


def test_drain_takes_overdue_entries_first():
    order = drain_order([entry("1-s"), entry("2-a", agent="a", overdue=True), entry("3-t", overdue=True)])
    assert [e.name for e in order] == ["3-t", "2-a", "1-s"]


def test_drain_byte_budget_bounds_the_pass():
    plan = plan_pass([entry(f"{i}-s{i}", size=400) for i in range(5)], DrainBudget(max_bytes=1000))
    assert len(plan.take) == 2 and plan.remaining == 3


def test_drain_count_budget_bounds_the_pass():
    plan = plan_pass([entry(f"{i}-s{i}") for i in range(5)], DrainBudget(max_count=3))
    assert len(plan.take) == 3 and plan.remaining == 2


def test_drain_byte_budget_always_makes_progress():
    plan = plan_pass([entry("1-huge", size=10**9), entry("2-s")], DrainBudget(max_bytes=10))
    assert [e.name for e in plan.take] == ["1-huge"] and plan.remaining == 1


def test_broken_entries_are_reported_and_cost_no_budget():
    plan = plan_pass([entry("0-b", error="broken")] * 3 + [entry("1-s")], DrainBudget(max_count=1))
    assert [e.name for e in plan.take] == ["1-s"] and len(plan.broken) == 3


def test_unbounded_budget_takes_everything_and_counts_overdue():
    plan = plan_pass([entry(f"{i}-s", overdue=i % 2 == 0) for i in range(6)], DrainBudget())
    assert len(plan.take) == 6 and plan.remaining == 0 and plan.overdue == 3
