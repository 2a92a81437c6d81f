"""The scheduler's wiring: jobs and their options, firing, restarts, one per brain.

The queue is the edge the scheduler talks to, so it is a recording fake; the
brain, the lease and APScheduler are real.  Time is a clock the test moves
(:class:`ManualClock`): the scheduler, its jobs and its lease read it, and so
does APScheduler, so every run is counted exactly, never in a range.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

import apscheduler.executors.base
import apscheduler.schedulers.base
import pytest
from apscheduler.events import EVENT_JOB_EXECUTED
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.blocking import BlockingScheduler
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.brain.leases import LeaseHeld, acquire_lease, lease_holder
from memory_core.runtime import Runtime
from reverie.scheduler import LeasedScheduler, build_scheduler
from reverie.scheduler.jobs import DREAM_CRON, DREAM_DUE, LEASE, RECONCILE

INTERVAL = 60.0  # seconds of the test's clock, for the reconcile sweep and the due check


class Recorder:
    """A fake actor: records each send's arguments; can block or fail on demand."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.lock = threading.Lock()
        self.hold: threading.Event | None = None
        self.fail: Exception | None = None
        self.running = 0
        self.most_running = 0

    def send(self, *args: Any, **kwargs: Any) -> None:
        with self.lock:
            self.calls.append(args)
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        try:
            if self.hold is not None:
                self.hold.wait(5)
            if self.fail is not None:
                raise self.fail
        finally:
            with self.lock:
                self.running -= 1

    def count(self) -> int:
        with self.lock:
            return len(self.calls)


@dataclass
class FakeJobs:
    """The queue as far as the scheduler sends to it: the dream passes and reconcile
    sweeps it asked for, by reason."""

    dreams: Recorder = field(default_factory=Recorder)
    reconciles: Recorder = field(default_factory=Recorder)

    def dream(self, reason: str, pass_id: str | None) -> None:
        assert pass_id is None  # the pass names itself
        self.dreams.send(reason)

    def reconcile(self) -> None:
        self.reconciles.send()


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait (in real time) for the scheduler's threads to catch up with the clock."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


class ManualClock:
    """Epoch seconds that move only when the test says so."""

    def __init__(self, start: float) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def now(self, tz: tzinfo | None = None) -> datetime:
        return datetime.fromtimestamp(self(), tz or UTC)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> ManualClock:
    """The test's clock, which APScheduler 3 reads too: it takes the time of day from
    ``datetime.now`` in two of its modules, pointed here at this clock."""
    manual = ManualClock(float(int(time.time())))

    class ClockTime(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> datetime:  # type: ignore[override]
            return manual.now(tz)

    monkeypatch.setattr(apscheduler.schedulers.base, "datetime", ClockTime)
    monkeypatch.setattr(apscheduler.executors.base, "datetime", ClockTime)
    return manual


@pytest.fixture
def fast(settings: mc.Settings) -> mc.Settings:
    """Sweeps and due checks every INTERVAL; a never-due brain unless a test says so."""
    return settings.model_copy(
        update={
            "reconcile_every_s": INTERVAL,
            "dream_due_check_minutes": INTERVAL / 60,
            "dream_due_min_new_traces": 1_000_000,
        }
    )


@pytest.fixture
def make(brain: mc.Brain, clock: ManualClock) -> Iterator[Callable[..., LeasedScheduler]]:
    """``make(settings, jobs)``: a background scheduler on the test's clock, shut down
    after the test."""
    made: list[LeasedScheduler] = []

    def _make(settings: mc.Settings, jobs: Any) -> LeasedScheduler:
        runtime = Runtime(settings, brain, jobs)
        scheduler = build_scheduler(runtime, background=True, clock=clock)
        made.append(scheduler)
        return scheduler

    yield _make
    for scheduler in made:
        scheduler.shutdown()


def runs(scheduler: LeasedScheduler, job: str) -> int:
    """Runs of ``job`` that ended (ok or failed) or were skipped or missed."""
    stats = scheduler.stats.snapshot().get(job)
    return 0 if stats is None else stats.fired + stats.failed + stats.skipped + stats.missed


def tick(clock: ManualClock, scheduler: LeasedScheduler, seconds: float, *jobs: str) -> None:
    """Move the clock on, let the scheduler look, and wait until each of ``jobs`` has run
    once more.  A job still running when the clock moves again would have its next run
    skipped (one instance at a time), so a test that counts a job's runs waits for it."""
    before = {job: runs(scheduler, job) for job in jobs}
    clock.advance(seconds)
    scheduler.wakeup()
    wait_until(lambda: all(runs(scheduler, job) > before[job] for job in jobs))


def test_every_job_is_registered_with_coalesce_one_instance_and_its_grace(
    settings: mc.Settings, brain: mc.Brain
) -> None:
    scheduler = build_scheduler(Runtime(settings, brain, FakeJobs()), background=False)
    jobs = {job.id: job for job in scheduler.get_jobs()}
    assert set(jobs) == {DREAM_CRON, DREAM_DUE, RECONCILE, LEASE}
    assert all(job.coalesce is True for job in jobs.values())
    assert all(job.max_instances == 1 for job in jobs.values())
    grace = {job_id: job.misfire_grace_time for job_id, job in jobs.items()}
    assert grace == {DREAM_CRON: 3600, DREAM_DUE: 600, RECONCILE: 60, LEASE: None}
    assert jobs[RECONCILE].trigger.interval == timedelta(seconds=60)
    assert jobs[DREAM_DUE].trigger.interval == timedelta(minutes=10)
    assert jobs[LEASE].trigger.interval == timedelta(seconds=10)
    assert not isinstance(scheduler, BackgroundScheduler)
    assert isinstance(scheduler, BlockingScheduler)
    background = build_scheduler(Runtime(settings, brain, FakeJobs()), background=True)
    assert isinstance(background, BackgroundScheduler)


def test_the_dream_cron_fires_at_half_past_three_local_time(
    settings: mc.Settings, brain: mc.Brain
) -> None:
    scheduler = build_scheduler(Runtime(settings, brain, FakeJobs()), background=True)
    trigger = scheduler.get_job(DREAM_CRON).trigger
    noon = datetime(2026, 3, 10, 12, 0, tzinfo=trigger.timezone)
    assert trigger.get_next_fire_time(None, noon) == datetime(
        2026, 3, 11, 3, 30, tzinfo=trigger.timezone
    )
    weekly = settings.model_copy(update={"dream_cron": "15 2 * * sun"})
    trigger = (
        build_scheduler(Runtime(weekly, brain, FakeJobs()), background=True)
        .get_job(DREAM_CRON)
        .trigger
    )
    assert trigger.get_next_fire_time(None, noon) == datetime(
        2026, 3, 15, 2, 15, tzinfo=trigger.timezone
    )


@pytest.mark.parametrize("cron", ["30 3 * *", "61 3 * * *", "every night"])
def test_a_bad_crontab_is_a_config_error(settings: mc.Settings, brain: mc.Brain, cron: str) -> None:
    bad = settings.model_copy(update={"dream_cron": cron})
    with pytest.raises(mc.ConfigError, match="dream_cron"):
        build_scheduler(Runtime(bad, brain, FakeJobs()), background=True)


def test_reconcile_is_sent_at_start_and_then_every_interval(
    fast: mc.Settings, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    jobs = FakeJobs()
    scheduler = make(fast, jobs)
    scheduler.start()
    wait_until(lambda: runs(scheduler, RECONCILE) == 1)  # its stats, not only its send
    clock.advance(INTERVAL - 1)
    scheduler.wakeup()
    time.sleep(0.1)
    assert jobs.reconciles.count() == 1  # not before its interval
    tick(clock, scheduler, 1, RECONCILE)  # one interval after the start
    for _ in range(4):
        tick(clock, scheduler, INTERVAL, RECONCILE)
    scheduler.shutdown()  # waits for a run in progress and its event
    assert jobs.reconciles.count() == 6
    assert jobs.reconciles.calls[0] == ()
    stats = scheduler.stats.snapshot()[RECONCILE]
    assert stats.fired == stats.sent == 6
    assert stats.last_run_at == clock() and stats.failed == stats.missed == 0
    assert jobs.dreams.count() == 0  # never due, and 03:30 is not now


def test_the_due_check_sends_a_dream_only_when_due(
    fast: mc.Settings, brain: mc.Brain, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    mc.add_trace(brain, "an old memory", now=clock() - 7200, identity=SYSTEM)
    not_due = FakeJobs()
    scheduler = make(fast, not_due)
    scheduler.start()
    wait_until(lambda: runs(scheduler, DREAM_DUE) == 1)
    tick(clock, scheduler, INTERVAL, DREAM_DUE)
    tick(clock, scheduler, INTERVAL, DREAM_DUE)
    assert scheduler.stats.snapshot()[DREAM_DUE].fired == 3
    assert not_due.dreams.count() == 0
    assert scheduler.stats.snapshot()[DREAM_DUE].sent == 0
    scheduler.shutdown()

    due = FakeJobs()
    settings = fast.model_copy(update={"dream_due_after_hours": 1, "dream_due_min_new_traces": 1})
    scheduler = make(settings, due)
    scheduler.start()
    wait_until(lambda: due.dreams.count() == 1)
    assert due.dreams.calls[0] == ("due",)


def test_a_brain_becomes_due_as_its_clock_moves(
    fast: mc.Settings, brain: mc.Brain, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    mc.add_trace(brain, "a fresh memory", now=clock(), identity=SYSTEM)
    # The daily pass is set to the minute just gone, so the hour ticked here never
    # reaches it (at 02:30-03:30 the default 03:30 would fire among the due checks).
    gone = datetime.fromtimestamp(clock() - 60).astimezone()
    settings = fast.model_copy(
        update={
            "dream_due_after_hours": 1,
            "dream_due_min_new_traces": 1,
            "dream_cron": f"{gone.minute} {gone.hour} * * *",
        }
    )
    jobs = FakeJobs()
    scheduler = make(settings, jobs)
    scheduler.start()
    wait_until(lambda: runs(scheduler, DREAM_DUE) == 1)
    for _ in range(59):  # an hour less one check: not yet
        tick(clock, scheduler, INTERVAL, DREAM_DUE)
    assert jobs.dreams.count() == 0
    tick(clock, scheduler, INTERVAL, DREAM_DUE)
    assert jobs.dreams.calls == [("due",)]


def test_the_cron_job_sends_a_dream_with_reason_cron(
    settings: mc.Settings, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    jobs = FakeJobs()
    scheduler = make(settings, jobs)
    scheduler.start()
    scheduler.modify_job(DREAM_CRON, next_run_time=clock.now())
    wait_until(lambda: jobs.dreams.count() == 1)
    scheduler.shutdown()  # waits for the run and its event
    assert jobs.dreams.calls == [("cron",)]
    assert scheduler.stats.snapshot()[DREAM_CRON].sent == 1


def test_a_cron_pass_missed_by_more_than_the_grace_is_skipped_not_run_late(
    settings: mc.Settings, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    # A schedule whose previous firing is far from now, so only the run time set below is due.
    later = clock.now().astimezone() + timedelta(hours=6)
    settings = settings.model_copy(update={"dream_cron": f"{later.minute} {later.hour} * * *"})
    jobs = FakeJobs()
    scheduler = make(settings, jobs)
    scheduler.start()
    scheduler.modify_job(DREAM_CRON, next_run_time=clock.now() - timedelta(hours=2))
    wait_until(lambda: scheduler.stats.snapshot().get(DREAM_CRON) is not None)
    assert scheduler.stats.snapshot()[DREAM_CRON].missed == 1
    assert jobs.dreams.count() == 0
    scheduler.modify_job(DREAM_CRON, next_run_time=clock.now() - timedelta(minutes=10))
    wait_until(lambda: jobs.dreams.count() == 1)  # late, but within the hour's grace


class RunLog:
    """Every executed run's job and *scheduled* run time, whatever its lateness."""

    def __init__(self, scheduler: LeasedScheduler) -> None:
        self.runs: list[tuple[str, datetime]] = []
        self.lock = threading.Lock()
        scheduler.add_listener(self.on_event, EVENT_JOB_EXECUTED)

    def on_event(self, event: Any) -> None:
        with self.lock:
            self.runs.append((event.job_id, event.scheduled_run_time))

    def scheduled(self, job_id: str) -> list[datetime]:
        """When the runs of ``job_id`` were scheduled, in order."""
        with self.lock:
            return [at for j, at in self.runs if j == job_id]


def test_a_restarted_scheduler_replays_nothing_of_its_downtime(
    fast: mc.Settings, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    first = make(fast, FakeJobs())
    first.start()
    wait_until(lambda: runs(first, RECONCILE) == 1)
    tick(clock, first, INTERVAL, RECONCILE)
    first.shutdown()
    clock.advance(6 * INTERVAL)  # down for six intervals

    jobs = FakeJobs()
    second = make(fast, jobs)
    log = RunLog(second)
    started = clock.now()
    second.start()
    wait_until(lambda: runs(second, RECONCILE) == 1 and runs(second, DREAM_DUE) == 1)
    for _ in range(3):
        tick(clock, second, INTERVAL, RECONCILE, DREAM_DUE)
    # The log's listener may hear of a run just after the stats' listener did.
    wait_until(lambda: min(len(log.scheduled(RECONCILE)), len(log.scheduled(DREAM_DUE))) >= 4)
    # The start-up run of each interval job, then one an interval: nothing of the downtime.
    every = [started + k * timedelta(seconds=INTERVAL) for k in range(4)]
    assert log.scheduled(RECONCILE) == every
    assert log.scheduled(DREAM_DUE) == every
    assert log.scheduled(DREAM_CRON) == []
    assert jobs.dreams.count() == 0


def test_downtime_of_a_running_scheduler_is_one_catch_up_run_not_a_burst(
    fast: mc.Settings, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    """Paused = the process or host suspended: run times pass while nothing runs."""
    jobs = FakeJobs()
    scheduler = make(fast, jobs)
    log = RunLog(scheduler)
    scheduler.start()
    # The start's run counts once its event is in: the send alone may come before it.
    wait_until(lambda: len(log.scheduled(RECONCILE)) == 1)

    def runs_for_missed_times(expected: int) -> int:
        before = len(log.scheduled(RECONCILE))
        scheduler.pause()
        clock.advance(6 * INTERVAL + 1)
        scheduler.resume()
        wait_until(lambda: len(log.scheduled(RECONCILE)) - before >= expected)
        time.sleep(0.2)  # room for a run too many to show
        return len(log.scheduled(RECONCILE)) - before

    assert runs_for_missed_times(1) == 1
    # The same downtime without coalescing (and a grace that covers it): every missed run.
    scheduler.modify_job(RECONCILE, coalesce=False, misfire_grace_time=3600)
    assert runs_for_missed_times(6) == 6


def test_a_run_still_going_is_not_joined_by_another(
    fast: mc.Settings, brain: mc.Brain, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    mc.add_trace(brain, "an old memory", now=clock() - 7200, identity=SYSTEM)
    settings = fast.model_copy(update={"dream_due_after_hours": 1, "dream_due_min_new_traces": 1})
    jobs = FakeJobs()
    jobs.dreams.hold = threading.Event()  # the due check's send takes long
    scheduler = make(settings, jobs)
    scheduler.start()
    wait_until(lambda: jobs.dreams.running == 1)
    tick(clock, scheduler, INTERVAL, DREAM_DUE)
    tick(clock, scheduler, INTERVAL, DREAM_DUE)
    assert scheduler.stats.snapshot()[DREAM_DUE].skipped == 2
    jobs.dreams.hold.set()
    assert jobs.dreams.most_running == 1


def test_a_failing_job_is_counted_and_keeps_its_schedule(
    fast: mc.Settings, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    jobs = FakeJobs()
    jobs.reconciles.fail = RuntimeError("broker down")
    scheduler = make(fast, jobs)
    scheduler.start()
    wait_until(lambda: runs(scheduler, RECONCILE) == 1)
    tick(clock, scheduler, INTERVAL, RECONCILE)
    scheduler.shutdown()
    stats = scheduler.stats.snapshot()[RECONCILE]
    assert stats.failed == 2 and stats.fired == 0
    assert stats.last_error == "RuntimeError('broker down')"


def test_a_second_scheduler_on_the_same_brain_refuses_to_start(
    settings: mc.Settings, brain: mc.Brain, make: Callable[..., LeasedScheduler]
) -> None:
    first = make(settings, FakeJobs())
    first.start()
    jobs = FakeJobs()
    second = make(settings, jobs)
    with pytest.raises(LeaseHeld, match="another scheduler") as refused:
        second.start()
    assert first.lease.holder in str(refused.value)
    assert not second.running and jobs.reconciles.count() == 0
    held = lease_holder(brain, "scheduler")
    assert held is not None and held.holder == first.lease.holder

    first.shutdown()
    assert lease_holder(brain, "scheduler") is None
    third = make(settings, FakeJobs())
    third.start()
    assert third.running


def test_a_dead_schedulers_lease_is_taken_over_once_expired(
    settings: mc.Settings, brain: mc.Brain, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    ttl = settings.scheduler_lease_ttl_s
    acquire_lease(brain, "scheduler", "crashed-host:1:dead", ttl, now=clock())
    clock.advance(ttl / 2)
    with pytest.raises(LeaseHeld, match=r"crashed-host.*in 15 s"):
        make(settings, FakeJobs()).start()
    clock.advance(ttl / 2)
    scheduler = make(settings, FakeJobs())
    scheduler.start()
    held = lease_holder(brain, "scheduler")
    assert held is not None and held.holder == scheduler.lease.holder
    assert held.expires_at == clock() + ttl


def test_the_lease_is_renewed_while_the_scheduler_runs(
    settings: mc.Settings, brain: mc.Brain, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    ttl = settings.scheduler_lease_ttl_s
    scheduler = make(settings, FakeJobs())
    scheduler.start()
    for _ in range(6):  # twice the TTL
        tick(clock, scheduler, ttl / 3, LEASE)
    held = lease_holder(brain, "scheduler")
    assert held is not None and held.holder == scheduler.lease.holder
    assert held.expires_at == clock() + ttl
    assert scheduler.stats.snapshot()[LEASE].fired == 6


def test_a_scheduler_whose_lease_was_taken_stops_itself(
    fast: mc.Settings, brain: mc.Brain, make: Callable[..., LeasedScheduler], clock: ManualClock
) -> None:
    jobs = FakeJobs()
    scheduler = make(fast, jobs)
    scheduler.start()
    wait_until(lambda: jobs.reconciles.count() == 1)
    with brain.transaction() as conn:  # it stalled past its TTL and another took over
        conn.execute(
            text("UPDATE leases SET holder = 'thief', expires_at = :t WHERE name = 'scheduler'"),
            {"t": clock() + 60},
        )
    clock.advance(fast.scheduler_lease_ttl_s / 3)
    scheduler.wakeup()
    wait_until(lambda: not scheduler.running, timeout=3)
    assert scheduler.lost_lease
    held = lease_holder(brain, "scheduler")
    assert held is not None and held.holder == "thief"
    sent = jobs.reconciles.count()
    clock.advance(2 * INTERVAL)
    time.sleep(0.1)
    assert jobs.reconciles.count() == sent
