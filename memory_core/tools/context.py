"""What a tool call runs with: who calls, on which brain, and what the process offers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memory_core.auth import Identity
from memory_core.brain.db import Brain
from memory_core.errors import NotEnabled
from memory_core.inbox.turns import Accepted, Turn
from memory_core.jobs import Jobs
from memory_core.retrieval.query_embedding import SearchEmbedder
from memory_core.retrieval.rerank import Reranker

if TYPE_CHECKING:
    from memory_core.runtime import Runtime


@dataclass
class ToolContext:
    """Who is calling and with what: the brain, the caller's identity, the scope ids of
    this call, and what the process offers the tools.

    ``identity`` decides what the call may do (each tool's ``needs``) and which
    scope ids it sees and writes: confined to ``scope_ids`` when the call names
    any (see :meth:`~memory_core.auth.Identity.acting_as`).  ``embedder`` embeds
    search queries (None: BM25 alone); ``reflect`` runs or queues a dream pass
    (None: not available to this caller); ``submit_turn`` commits and queues a
    posted turn (None: committed to the inbox, where reconcile finds it);
    ``jobs`` takes each call's follow-up work (None: none is sent); ``reranker`` reorders
    searches' best (None: the fused order).  A process
    makes its contexts with :meth:`of`.
    """

    brain: Brain
    identity: Identity
    scope_ids: Mapping[str, str] = field(default_factory=dict)
    reflect: Callable[[], dict[str, Any]] | None = None
    embedder: SearchEmbedder = None
    submit_turn: Callable[[Turn], tuple[Accepted, bool]] | None = None
    jobs: Jobs | None = None
    reranker: Reranker | None = None

    def __post_init__(self) -> None:
        self.identity = self.identity.acting_as(self.scope_ids)

    @classmethod
    def of(
        cls,
        runtime: Runtime,
        identity: Identity,
        scope_ids: Mapping[str, str] | None = None,
        *,
        submit_turn: Callable[[Turn], tuple[Accepted, bool]] | None = None,
    ) -> ToolContext:
        """A call's context in a process: its runtime's brain, query embedder and queue.

        A pass is queued for the workers (never run on the caller's thread), and
        a posted turn goes through the runtime's group commit unless
        ``submit_turn`` says otherwise.
        """
        return cls(
            runtime.brain,
            identity,
            scope_ids or {},
            reflect=lambda: queue_reflect(runtime.jobs),
            embedder=runtime.query_embedder,
            submit_turn=submit_turn or runtime.submit_turn,
            jobs=runtime.jobs,
            reranker=runtime.reranker(),
        )


def queue_reflect(jobs: Jobs) -> dict[str, Any]:
    """memory_reflect where workers run: the pass queued, off the caller's thread; answers
    its id (its report: ``memctl dreams``)."""
    from memory_core.consolidation.dream import new_pass_id

    if not jobs.queued:
        raise NotEnabled("dream passes are not available to this caller")
    pass_id = new_pass_id()
    jobs.dream("reflect", pass_id)
    return {"passId": pass_id, "status": "queued"}
