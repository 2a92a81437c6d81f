"""The dream pass: its steps under a lease, a report, a log row.

``dream(brain, settings)`` takes the brain's ``dream`` lease (one pass per
brain at a time, across processes and machines; renewed while it runs, so a
pass killed with -9 frees it when it expires), then runs embed, prune, merge,
resolve, strengthen, derive, compact and re-index.  The report says what the
pass's judge (the configured reasoner, :mod:`.judge`) spent.  Each step commits on its own, in
one transaction, so a pass that dies midway leaves every step either done or
not done.  Unattended steps only add and update, apart from merging exact
duplicates (the survivor holds the identical content); every other deletion
is a proposal.

A dry run plans every step and changes nothing: it takes no lease, writes no
log row and no report file, and returns the report.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, text

from memory_core.auth import DREAM, READ, Identity, brain_wide
from memory_core.brain.db import Brain
from memory_core.brain.leases import PASS_LEASE, acquire_lease, release_lease, renew_lease
from memory_core.consolidation import (
    compact,
    derive,
    embed,
    merge,
    prune,
    reindex,
    resolve,
    strengthen,
)
from memory_core.consolidation.base import PassContext, StepResult
from memory_core.embedders.base import Embedder
from memory_core.errors import NotFound
from memory_core.proposals import expire
from memory_core.settings import Settings
from memory_core.traces.undo import UndoResult, undo_unit

log = logging.getLogger(__name__)

LEASE = PASS_LEASE
STEPS: list[tuple[str, Callable[[PassContext], StepResult]]] = [
    ("embed", embed.run),
    ("prune", prune.run),
    ("merge", merge.run),
    ("resolve", resolve.run),
    ("strengthen", strengthen.run),
    ("derive", derive.run),
    ("compact", compact.run),
    ("reindex", reindex.run),
]


@dataclass
class DreamReport:
    pass_id: str
    status: str  # ok | failed | already_running | dry_run
    reason: str
    started_at: float
    duration_s: float = 0.0
    steps: list[StepResult] = field(default_factory=list)
    error: str | None = None
    report_path: str | None = None
    # What the pass's judge spent (memory_core.consolidation.judge.Spend); None: no judge.
    judge: dict[str, Any] | None = None

    def count(self, step: str, key: str) -> int:
        return sum(s.counts.get(key, 0) for s in self.steps if s.name == step)

    def summary(self) -> dict[str, int]:
        """The reflect tool's counts; ``pruned`` counts prune proposals."""
        return {
            "pruned": self.count("prune", "proposed"),
            "merged": self.count("merge", "merged"),
            "mergeProposed": self.count("merge", "proposed"),
            "superseded": self.count("resolve", "superseded"),
            "conflictsProposed": self.count("resolve", "proposed"),
            "derived": self.count("derive", "derived"),
            "compacted": self.count("compact", "compacted"),
            "durationMs": int(self.duration_s * 1000),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "pass_id": self.pass_id,
            "status": self.status,
            "reason": self.reason,
            "started_at": datetime.fromtimestamp(self.started_at, UTC).isoformat(),
            "duration_s": round(self.duration_s, 3),
            "summary": self.summary(),
            "steps": [s.to_dict() for s in self.steps],
            "judge": self.judge,
            "error": self.error,
            "report_path": self.report_path,
        }


def last_pass_started(brain: Brain) -> float | None:
    """When the last completed pass started: what is "new" to this one."""
    with brain.read() as conn:
        value = conn.execute(
            text(
                "SELECT max(started_at) FROM consolidation_log WHERE status = 'ok' AND dry_run = 0"
            )
        ).scalar()
    return float(value) if value is not None else None


def dream(
    brain: Brain,
    settings: Settings,
    *,
    dry_run: bool = False,
    embedder: Embedder | None = None,
    reason: str = "manual",
    now: float | None = None,
    on_step: Callable[[str], None] | None = None,
    pass_id: str | None = None,
) -> DreamReport:
    """Run one pass (or, with ``dry_run``, plan one) and return its report;
    ``on_step(name)`` hears of each step as it finishes.  ``pass_id``: the id the
    pass was announced under when it was queued (:func:`new_pass_id`)."""
    pass_id = pass_id or new_pass_id()
    started = time.time()
    report = DreamReport(pass_id, "dry_run" if dry_run else "ok", reason, started)
    ctx = PassContext(
        brain,
        settings,
        pass_id,
        dry_run,
        embedder,
        now=started if now is None else now,
        last_pass_at=last_pass_started(brain),
        on_step=on_step,
    )
    if dry_run:
        _run_steps(ctx, report)
        report.duration_s = time.time() - started
        return report
    if not acquire_lease(brain, LEASE, pass_id, settings.dream_lease_ttl_s):
        report.status = "already_running"
        log.info("dream pass not started: another pass holds the lease")
        return report
    keeper = _LeaseKeeper(brain, pass_id, settings.dream_lease_ttl_s)
    try:
        _close_interrupted(brain, started)
        expired = expire(brain, settings, now=ctx.now)
        if expired:
            log.info("dream %s: %d pending proposals expired", pass_id, len(expired))
        _log_start(brain, report)
        keeper.start()
        try:
            _run_steps(ctx, report)
        except Exception as e:  # the pass boundary: record, report, re-raise
            report.status, report.error = "failed", f"{type(e).__name__}: {e}"
            log.exception("dream pass %s failed", pass_id)
            raise
        finally:
            report.duration_s = time.time() - started
            report.report_path = (
                write_report(settings, report).relative_to(settings.data_dir).as_posix()
            )
            _log_end(brain, report)
    finally:
        keeper.stop()
        release_lease(brain, LEASE, pass_id)
    return report


def _run_steps(ctx: PassContext, report: DreamReport) -> None:
    try:
        _each_step(ctx, report)
    finally:
        report.judge = ctx.spent()
        ctx.close()


def _each_step(ctx: PassContext, report: DreamReport) -> None:
    for name, step in STEPS:
        t0 = time.perf_counter()
        result = step(ctx)
        result.duration_s = time.perf_counter() - t0
        report.steps.append(result)
        log.info("dream %s: %s %s in %.2fs", ctx.pass_id, name, result.counts, result.duration_s)
        if ctx.on_step is not None:
            ctx.on_step(name)


class _LeaseKeeper:
    """Renews the pass's lease every third of its lifetime until stopped."""

    def __init__(self, brain: Brain, holder: str, ttl_s: float) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(brain, holder, ttl_s), name="dream-lease", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _run(self, brain: Brain, holder: str, ttl_s: float) -> None:
        while not self._stop.wait(ttl_s / 3):
            try:
                if not renew_lease(brain, LEASE, holder, ttl_s):
                    log.error("dream lease %s lost", holder)
            except Exception:  # a failed renewal is retried at the next tick
                log.exception("could not renew the dream lease")


def _close_interrupted(brain: Brain, now: float) -> None:
    """Passes still 'running' belong to processes that died (we hold the lease)."""
    with brain.transaction() as conn:
        conn.execute(
            text(
                "UPDATE consolidation_log SET status = 'interrupted', finished_at = :now "
                "WHERE status = 'running'"
            ),
            {"now": now},
        )


def _log_start(brain: Brain, report: DreamReport) -> None:
    with brain.transaction() as conn:
        conn.execute(
            text(
                "INSERT INTO consolidation_log (id, started_at, status, dry_run, counts) "
                "VALUES (:id, :at, 'running', 0, '{}')"
            ),
            {"id": report.pass_id, "at": report.started_at},
        )


def _log_end(brain: Brain, report: DreamReport) -> None:
    counts = {s.name: s.counts for s in report.steps}
    with brain.transaction() as conn:
        conn.execute(
            text(
                "UPDATE consolidation_log SET status = :status, finished_at = :end, "
                "counts = :counts, report_path = :path, report = :report, "
                "step_seconds = :seconds WHERE id = :id"
            ),
            {
                "status": report.status,
                "end": report.started_at + report.duration_s,
                "counts": json.dumps(counts),
                "path": report.report_path,
                "report": json.dumps(_kept_report(report), ensure_ascii=False),
                "seconds": json.dumps({s.name: round(s.duration_s, 3) for s in report.steps}),
                "id": report.pass_id,
            },
        )


# How many of a step's items the brain keeps with a pass's report (the JSON file has all).
KEPT_ITEMS = 500


def _kept_report(report: DreamReport) -> dict[str, Any]:
    """The report as the brain keeps it: each step's items cut to :data:`KEPT_ITEMS`."""
    doc = report.to_dict()
    for step in doc["steps"]:
        if len(step["items"]) > KEPT_ITEMS:
            step["items_total"] = len(step["items"])
            step["items"] = step["items"][:KEPT_ITEMS]
    return doc


# Where passes write their reports, in the data folder.
REPORTS = "dream-reports"


def write_report(settings: Settings, report: DreamReport) -> Path:
    """The pass's report as JSON and Markdown under DATA_DIR/dream-reports/."""
    folder = Path(settings.data_dir) / REPORTS
    folder.mkdir(parents=True, exist_ok=True)
    doc = report.to_dict()
    json_path = folder / f"{report.pass_id}.json"
    json_path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    (folder / f"{report.pass_id}.md").write_text(render_markdown(doc))
    return json_path


def render_markdown(doc: dict[str, Any]) -> str:
    lines = [
        f"# Dream pass {doc['pass_id']}",
        "",
        f"- status: {doc['status']} ({doc['reason']})",
        f"- started: {doc['started_at']}, took {doc['duration_s']} s",
        f"- summary: {doc['summary']}",
    ]
    if doc.get("judge"):
        lines.append(f"- judge: {_judge_line(doc['judge'])}")
    if doc.get("error"):
        lines.append(f"- error: {doc['error']}")
    for step in doc["steps"]:
        lines += [
            "",
            f"## {step['name']} ({step['duration_s']} s)",
            "",
            f"counts: {step['counts']}",
        ]
        lines += [f"- note: {n}" for n in step["notes"]]
        lines += [f"- proposal {p}" for p in step["proposals"]]
        lines += [f"- {json.dumps(item, ensure_ascii=False)}" for item in step["items"][:200]]
        if len(step["items"]) > 200:
            lines.append(f"- ... {len(step['items']) - 200} more in the JSON report")
    return "\n".join(lines) + "\n"


def _judge_line(spent: dict[str, Any]) -> str:
    """What the pass's judge spent, in words."""
    line = (
        f"{spent['reasoner']} asked {spent['calls']} of at most {spent['max_calls']} "
        f"({spent['failed']} failed), {spent['cached']} answered from the cache, "
        f"{spent['tokens']} tokens, {spent['seconds']} s"
    )
    if spent["over_budget"]:
        line += f"; {spent['over_budget']} not asked past the bound (offline verdicts kept)"
    if spent["not_asked"]:
        line += f"; {spent['not_asked']} not asked after failures (offline verdicts kept)"
    return line


def new_pass_id() -> str:
    """A pass's id: when it was made, and a random part."""
    return f"dream_{datetime.now(UTC):%Y%m%dT%H%M%S}_{uuid.uuid4().hex[:8]}"


def reflect(brain: Brain, settings: Settings, embedder: Embedder | None) -> dict[str, Any]:
    """memory_reflect: run a pass now; zero counts when one is already running."""
    report = dream(brain, settings, embedder=embedder, reason="reflect")
    summary: dict[str, Any] = report.summary()
    if report.status == "already_running":
        summary["alreadyRunning"] = True
    return summary


# What a pass does spans every scope id: an identity confined to some may not look or undo.
_PASSES = "a dream pass"


def undo_pass(
    brain: Brain, pass_id: str, *, identity: Identity, now: float | None = None
) -> UndoResult:
    """Reverse what a pass did unattended -- exact merges, compaction, derived traces --
    as one unit; refused (changing nothing) when one of those traces changed since."""
    brain_wide(identity, DREAM, act=_PASSES)
    with brain.read() as conn:
        known = conn.execute(
            text("SELECT 1 FROM consolidation_log WHERE id = :id"), {"id": pass_id}
        ).first()
    if known is None:
        raise NotFound(f"no dream pass {pass_id}")
    return undo_unit(brain, pass_id, now=now)


# Whether a pass's unattended changes were undone, and whether some are left to undo.
_UNDO_STATE = (
    "EXISTS (SELECT 1 FROM undo_log u WHERE u.unit = c.id AND u.undone_at IS NOT NULL) "
    "AS undone, "
    "EXISTS (SELECT 1 FROM undo_log u WHERE u.unit = c.id AND u.undone_at IS NULL) AS undoable"
)


def list_passes(brain: Brain, limit: int = 50, *, identity: Identity) -> list[dict[str, Any]]:
    """The most recent passes from the consolidation log, newest first: each with its
    counts, how long each step took, and how many of its proposals were decided."""
    brain_wide(identity, READ, act=_PASSES)
    with brain.read() as conn:
        rows = conn.execute(
            text(
                "SELECT id, started_at, finished_at, status, dry_run, counts, report_path, "
                f"step_seconds, {_UNDO_STATE} FROM consolidation_log AS c "
                "ORDER BY started_at DESC LIMIT :n"
            ),
            {"n": limit},
        ).all()
        decided = _proposal_counts(conn, [r.id for r in rows])
    return [
        {
            "pass_id": r.id,
            "started_at": r.started_at,
            "duration_s": None if r.finished_at is None else round(r.finished_at - r.started_at, 3),
            "status": r.status,
            "counts": json.loads(r.counts),
            "step_seconds": json.loads(r.step_seconds or "{}"),
            "proposals": decided.get(r.id, {}),
            "report_path": shown_report_path(r.report_path),
            "undone": bool(r.undone),
            "undoable": bool(r.undoable),
        }
        for r in rows
    ]


def _proposal_counts(conn: Connection, pass_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per pass, how many of its proposals stand in each status (pending, accepted ...)."""
    if not pass_ids:
        return {}
    marks = ", ".join(f":p{i}" for i in range(len(pass_ids)))
    rows = conn.execute(
        text(
            "SELECT pass_id, status, count(*) AS n FROM proposals "
            f"WHERE pass_id IN ({marks}) GROUP BY pass_id, status"
        ),
        {f"p{i}": p for i, p in enumerate(pass_ids)},
    )
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        out.setdefault(r.pass_id, {})[r.status] = int(r.n)
    return out


def pass_report(brain: Brain, pass_id: str, *, identity: Identity) -> dict[str, Any]:
    """One pass's report (its steps' counts, times, notes, items and proposals) as written
    when it ended, with how its proposals were decided since; a pass still running has
    its log row's counts alone; and whether it was undone, or may be.  :class:`NotFound`
    for an unknown id."""
    brain_wide(identity, READ, act=_PASSES)
    with brain.read() as conn:
        row = conn.execute(
            text(f"SELECT c.*, {_UNDO_STATE} FROM consolidation_log AS c WHERE c.id = :id"),
            {"id": pass_id},
        ).first()
        if row is None:
            raise NotFound(f"no dream pass {pass_id}")
        decided = _proposal_counts(conn, [pass_id]).get(pass_id, {})
    doc: dict[str, Any] = (
        json.loads(row.report)
        if row.report
        else {
            "pass_id": row.id,
            "status": row.status,
            "started_at": datetime.fromtimestamp(row.started_at, UTC).isoformat(),
            "steps": [{"name": k, "counts": v} for k, v in json.loads(row.counts).items()],
        }
    )
    doc.update(proposals_decided=decided, undone=bool(row.undone), undoable=bool(row.undoable))
    if "report_path" in doc:
        doc["report_path"] = shown_report_path(doc["report_path"])
    return doc


def shown_report_path(path: str | None) -> str | None:
    """A report's place as answers name it: in the data folder, never the server's own
    path (passes of older versions recorded it whole)."""
    if not path:
        return path
    return f"{REPORTS}/{Path(path).name}"
