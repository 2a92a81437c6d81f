"""When a dream pass is due: the arithmetic of is_due and last_pass on a real brain."""

from __future__ import annotations

from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.brain.leases import PASS_LEASE, acquire_lease
from memory_core.consolidation.due import is_due, last_pass

HOUR = 3600.0
T0 = 1_800_000_000.0  # a fixed clock: every test passes now= explicitly


def add(brain: mc.Brain, count: int, at: float) -> None:
    items = [mc.NewTrace(content=f"note {at} {i}") for i in range(count)]
    mc.add_traces(brain, items, now=at, identity=SYSTEM)


def log_pass(
    brain: mc.Brain,
    pass_id: str,
    started: float,
    finished: float | None,
    *,
    status: str = "ok",
    dry_run: bool = False,
) -> None:
    with brain.transaction() as conn:
        conn.execute(
            text(
                "INSERT INTO consolidation_log(id, started_at, finished_at, status, dry_run) "
                "VALUES (:id, :s, :f, :status, :dry)"
            ),
            {"id": pass_id, "s": started, "f": finished, "status": status, "dry": int(dry_run)},
        )


def settings_with(settings: mc.Settings, hours: float = 24, traces: int = 200) -> mc.Settings:
    return settings.model_copy(
        update={"dream_due_after_hours": hours, "dream_due_min_new_traces": traces}
    )


def test_an_empty_brain_is_never_due(brain: mc.Brain, settings: mc.Settings) -> None:
    check = is_due(brain, settings_with(settings, hours=0, traces=0), now=T0)
    assert (check.due, check.hours_since, check.new_traces) == (False, None, 0)
    assert "no traces" in check.reason


def test_without_a_pass_time_and_traces_count_from_the_first_trace(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    add(brain, 150, T0)
    add(brain, 50, T0 + 10 * HOUR)
    s = settings_with(settings)
    early = is_due(brain, s, now=T0 + 23 * HOUR)
    assert (early.due, early.hours_since, early.new_traces) == (False, 23.0, 200)
    assert "23.0 h since the first trace" in early.reason
    on_time = is_due(brain, s, now=T0 + 24 * HOUR)  # both exactly at the thresholds
    assert (on_time.due, on_time.new_traces) == (True, 200)


def test_a_recent_pass_is_not_due_however_many_traces(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    add(brain, 10, T0)
    log_pass(brain, "p1", T0 + HOUR, T0 + 2 * HOUR)
    add(brain, 500, T0 + 3 * HOUR)
    check = is_due(brain, settings_with(settings), now=T0 + 5 * HOUR)
    assert (check.due, check.hours_since, check.new_traces) == (False, 3.0, 500)
    assert "3.0 h since the last pass" in check.reason


def test_enough_time_but_too_few_new_traces_is_not_due(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    add(brain, 400, T0)  # before the pass: not new
    log_pass(brain, "p1", T0 + HOUR, T0 + 2 * HOUR)
    add(brain, 199, T0 + 3 * HOUR)
    check = is_due(brain, settings_with(settings), now=T0 + 100 * HOUR)
    assert (check.due, check.new_traces) == (False, 199)
    assert "199 new traces" in check.reason


def test_both_thresholds_met_is_due(brain: mc.Brain, settings: mc.Settings) -> None:
    add(brain, 400, T0)
    log_pass(brain, "p1", T0 + HOUR, T0 + 2 * HOUR)
    add(brain, 200, T0 + 3 * HOUR)
    check = is_due(brain, settings_with(settings), now=T0 + 26 * HOUR)
    assert (check.due, check.hours_since, check.new_traces) == (True, 24.0, 200)
    assert check.reason.startswith("due:")


def test_traces_added_while_the_pass_ran_count_as_new(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    log_pass(brain, "p1", T0, T0 + 2 * HOUR)
    add(brain, 3, T0 + HOUR)
    assert is_due(brain, settings_with(settings, 0, 3), now=T0 + 3 * HOUR).new_traces == 3


def test_deleted_traces_are_not_new_work(brain: mc.Brain, settings: mc.Settings) -> None:
    add(brain, 2, T0)
    trace_id = mc.add_trace(brain, "soon gone", now=T0, identity=SYSTEM)
    mc.delete_trace(brain, trace_id, identity=SYSTEM)
    assert is_due(brain, settings_with(settings, 0, 0), now=T0 + HOUR).new_traces == 2


def test_last_pass_ignores_dry_runs_and_unfinished_rows(brain: mc.Brain) -> None:
    assert last_pass(brain) is None
    log_pass(brain, "old", T0, T0 + 1, status="failed")
    log_pass(brain, "dry", T0 + 10, T0 + 11, dry_run=True)
    log_pass(brain, "running", T0 + 20, None, status="running")
    found = last_pass(brain)
    assert found is not None
    assert (found.id, found.started_at, found.finished_at, found.status) == (
        "old",
        T0,
        T0 + 1,
        "failed",
    )


def test_a_failed_pass_still_resets_the_clock(brain: mc.Brain, settings: mc.Settings) -> None:
    """A pass that keeps failing is retried by cron, not every few minutes."""
    add(brain, 300, T0)
    log_pass(brain, "p1", T0 + 30 * HOUR, T0 + 31 * HOUR, status="failed")
    assert not is_due(brain, settings_with(settings, 24, 0), now=T0 + 32 * HOUR).due


def test_a_running_pass_holding_its_lease_is_not_due_until_the_lease_expires(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    add(brain, 300, T0)
    s = settings_with(settings)
    acquire_lease(brain, PASS_LEASE, "dream_abc", ttl_s=600, now=T0 + 30 * HOUR)
    busy = is_due(brain, s, now=T0 + 30 * HOUR + 60)
    assert not busy.due and "dream_abc is running" in busy.reason
    assert is_due(brain, s, now=T0 + 30 * HOUR + 601).due  # the pass died: its lease ran out
