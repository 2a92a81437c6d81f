"""Forgetting a scope id for good: a right-to-be-forgotten request.

Unlike a delete (a soft delete, undoable), this removes the scope id's words from
every copy Reverie keeps: the data folder's first, then the brain's in one write
transaction (a retry after a failure still finds every row to go):

- its traces (deleted or not), their vectors and archived vectors, full-text
  entries, co-activation edges, judgements, said vectors, supersession notes
  and journal entries (the before-images an edit or a pass left), and the
  inbox rows of its turns (:mod:`.rows`);
- what reasoners answered about its words (the judgement cache);
- the proposals naming its traces, in every status: ledger rows and files;
- what the pass reports say of them, in the brain (``consolidation_log``) and
  in ``dream-reports/`` (:mod:`.redact`, :mod:`.files`);
- its ids in the retrieval log and the merge step's carried pairs;
- the vectors: the change log restarts, so every process rebuilds its vector
  index and graph, and the saved graphs in ``vector-cache/`` are removed.

Then the freed bytes leave the disk: a SQLite brain is rewritten (``VACUUM``, with
``secure_delete`` on the erasing transaction) and its write-ahead log truncated;
on PostgreSQL every table is vacuumed (what that does and does not guarantee of
the server's files is in docs/operations.md).  A dream pass cannot run meanwhile:
forgetting holds the pass lease, waiting a while for a running pass to end.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import asdict, dataclass
from typing import Any

from memory_core.auth import DELETE, Identity, acting
from memory_core.brain.db import Brain, tables
from memory_core.brain.leases import PASS_LEASE, LeaseHeld, acquire_lease, release_lease
from memory_core.errors import BrainError, Forbidden, InvalidArgument
from memory_core.forget import files, rows
from memory_core.reasoners import cache as judgements
from memory_core.settings import Settings
from memory_core.traces.model import check_scope
from memory_core.traces.store import tags_rewritten

log = logging.getLogger(__name__)

# How long forgetting waits for a running dream pass to end before it is refused.
PASS_WAIT_S = 60.0


@dataclass(frozen=True)
class Forgotten:
    """What forgetting one scope id removed."""

    scope: str | None
    scope_id: str
    traces: int
    vectors: int
    turns: int
    edges: int
    proposals: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def forget_scope_id(
    brain: Brain, settings: Settings, scope_id: str, *, scope: str | None = None, identity: Identity
) -> Forgotten:
    """Remove everything of ``scope_id`` (of ``scope`` only, when given) for good.

    An identity confined to scope ids may forget only its own (one that named the
    scopes it acts for, only in those scopes).  Forgetting again what
    is already forgotten removes nothing and erases the freed bytes again.
    """
    within = acting(identity, DELETE).within
    if not scope_id:
        raise InvalidArgument("scope_id: required")
    if scope is not None:
        check_scope(scope)
    if within is not None and within.scopes is not None and scope is None:
        raise Forbidden(f"{identity.name} acts for named scopes: name the scope to forget")
    if within is not None and not within.admits(scope, scope_id):
        raise Forbidden(f"{identity.name} may forget only {within.describe()}")
    holder = f"forget_{uuid.uuid4().hex[:12]}"
    _hold_pass_lease(brain, holder, settings.dream_lease_ttl_s)
    try:
        forgotten = _forget(brain, settings, scope_id, scope)
    finally:
        release_lease(brain, PASS_LEASE, holder)
    erase_freed(brain)
    log.info(  # the counts alone: the scope id is the person's too
        "forgot a scope id: %d traces, %d turns, %d proposals",
        forgotten.traces,
        forgotten.turns,
        forgotten.proposals,
    )
    return forgotten


def _forget(brain: Brain, settings: Settings, scope_id: str, scope: str | None) -> Forgotten:
    # The files first: if what follows fails, the rows are still there for a retry to
    # find (found afterwards, the files would name traces no longer known).
    with brain.read() as conn:
        known = set(rows.trace_ids(conn, scope_id, scope))
        filed = rows.proposals_naming(conn, known) | files.proposal_files_naming(settings, known)
    files.remove_proposal_files(settings, filed)
    files.redact_report_files(settings, known | filed)
    with brain.transaction() as conn:
        if brain.dialect == "sqlite":
            conn.exec_driver_sql("PRAGMA secure_delete = ON")
        removed = rows.remove_traces(conn, scope_id, scope)
        traces = set(removed.trace_ids)  # with any stored since the files were done
        proposals = filed | rows.proposals_naming(conn, traces)
        rows.delete_in(conn, "proposals", "id", sorted(proposals))
        turns = rows.remove_turns(conn, scope_id, scope)
        judgements.forget(conn, scope_id, scope)
        rows.redact_pass_reports(conn, traces | proposals)
        rows.scrub_merge_state(conn, traces | proposals)
        rows.restart_vector_log(conn)
        tags_rewritten(conn)  # what has read the brain's tags reads them again, without these
        rows.optimize_index(conn)
        if brain.dialect == "sqlite":
            conn.exec_driver_sql("PRAGMA secure_delete = OFF")
    files.drop_saved_graphs(brain, settings)
    return Forgotten(
        scope, scope_id, len(traces), removed.vectors, turns, removed.edges, len(proposals)
    )


def _hold_pass_lease(brain: Brain, holder: str, ttl_s: float) -> None:
    """Take the dream pass lease, so that no pass plans with what is being forgotten."""
    deadline = time.monotonic() + PASS_WAIT_S
    while not acquire_lease(brain, PASS_LEASE, holder, ttl_s):
        if time.monotonic() >= deadline:
            raise LeaseHeld(
                "a dream pass is running; forgetting waits for it to end: try again shortly"
            )
        time.sleep(0.5)


def erase_freed(brain: Brain) -> None:
    """Make the bytes freed by deletions leave the brain's files.

    SQLite: the file is rewritten (VACUUM) and the write-ahead log truncated.
    PostgreSQL: every table is vacuumed, so dead rows are removed from its pages.
    """
    try:
        if brain.dialect == "sqlite":
            with brain.driver_connection() as conn:
                conn.execute("VACUUM")
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy is not None and busy[0]:
                log.warning("forget: readers kept the write-ahead log from being truncated")
            return
        with brain.read() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT")
            for table in sorted(tables(conn)):
                conn.exec_driver_sql(f'VACUUM "{table}"')
    except BrainError as e:  # the rows are gone already: say so
        raise BrainError(
            f"the scope id is forgotten, but the freed space could not be erased ({e}); "
            "forget it again to retry"
        ) from e
