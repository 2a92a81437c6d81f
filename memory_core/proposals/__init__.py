"""Proposals: the deletions and lossy merges a dream pass may not apply itself.

A pass files each one as a JSON document under ``DATA_DIR/proposals/pending/``
holding its evidence (the traces as they were, with content hashes and
versions), plus a row in the ``proposals`` ledger holding the file's SHA-256.
A person accepts or rejects it; accepting applies it with compare-and-set, so
a proposal whose traces changed since, or whose file was edited, is refused.

The ledger row is the truth and the file follows it.  A file is written under
a temporary name, the row is committed, then the file is renamed into place;
a decision is committed, then the file moves to ``accepted/`` or
``rejected/``.  :func:`recover` finishes whatever a crash interrupted, so a
proposal file is never visible without its row.  Called inside an outer
transaction, these functions leave file moves to the next :func:`recover`,
because until that transaction commits the rows they follow may still vanish.
"""

from memory_core.proposals.base import (
    KINDS,
    PRUNED_REASON,
    STATUSES,
    Decision,
    Outcome,
    ProposalDraft,
    ProposalInfo,
    Recovery,
    recover,
    subject_key,
)
from memory_core.proposals.create import create_proposals, filter_new, pending_room
from memory_core.proposals.decide import (
    accept,
    accept_all,
    expire,
    pending_ids,
    reject,
    reject_all,
    undo,
)
from memory_core.proposals.review import get_proposal, list_proposals, pending_stats, review

__all__ = [
    "KINDS",
    "PRUNED_REASON",
    "STATUSES",
    "Decision",
    "Outcome",
    "ProposalDraft",
    "ProposalInfo",
    "Recovery",
    "accept",
    "accept_all",
    "create_proposals",
    "expire",
    "filter_new",
    "get_proposal",
    "list_proposals",
    "pending_ids",
    "pending_room",
    "pending_stats",
    "recover",
    "reject",
    "reject_all",
    "review",
    "subject_key",
    "undo",
]
