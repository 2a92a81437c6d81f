"""Every library read and write that could cross tenants acts for an identity: without one
it is refused, never answered for every tenant, and changes nothing."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

import memory_core as mc
from memory_core import forget, inbox, proposals
from memory_core.auth import SYSTEM

# name -> the call with a given identity; each would read or write across tenants.
Call = Callable[[mc.Brain, mc.Settings, dict[str, str], Any], Any]
CALLS: dict[str, Call] = {
    "search": lambda b, s, ids, who: mc.search(b, "otters", embedder=None, identity=who),
    "get_trace": lambda b, s, ids, who: mc.get_trace(b, ids["bob"], identity=who),
    "list_traces": lambda b, s, ids, who: mc.list_traces(b, identity=who),
    "add_trace": lambda b, s, ids, who: mc.add_trace(b, "new", scope_id="bob", identity=who),
    "add_traces": lambda b, s, ids, who: mc.add_traces(b, [mc.NewTrace("new")], identity=who),
    "update_trace": lambda b, s, ids, who: mc.update_trace(
        b, ids["bob"], content="changed", identity=who
    ),
    "delete_trace": lambda b, s, ids, who: mc.delete_trace(b, ids["bob"], identity=who),
    "merge_traces": lambda b, s, ids, who: mc.merge_traces(
        b, [ids["bob"], ids["ann"]], identity=who
    ),
    "accept_turn": lambda b, s, ids, who: inbox.accept_turn(
        b, inbox.Turn("hi", "hello", "user", "bob"), identity=who
    ),
    "turn_status": lambda b, s, ids, who: inbox.turn_status(b, ids["turn"], identity=who),
    "list_proposals": lambda b, s, ids, who: proposals.list_proposals(b, s, identity=who),
    "review": lambda b, s, ids, who: proposals.review(b, s, identity=who),
    "forget_scope_id": lambda b, s, ids, who: forget.forget_scope_id(b, s, "bob", identity=who),
}


@pytest.fixture
def ids(brain: mc.Brain) -> dict[str, str]:
    turn = inbox.accept_turn(brain, inbox.Turn("hi", "hello", "user", "bob"), identity=SYSTEM)
    return {
        "bob": mc.add_trace(brain, "bob watches otters", scope_id="bob", identity=SYSTEM),
        "ann": mc.add_trace(brain, "ann watches otters", scope_id="ann", identity=SYSTEM),
        "turn": turn.turn_id,
    }


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("who", [None, "every tenant", {"scope_ids": None}])
def test_a_call_without_an_identity_is_refused_and_changes_nothing(
    brain: mc.Brain,
    settings: mc.Settings,
    ids: dict[str, str],
    digest: Callable[[mc.Brain], str],
    name: str,
    who: Any,
) -> None:
    before = digest(brain)
    with pytest.raises(mc.Forbidden, match="acts for an identity"):
        CALLS[name](brain, settings, ids, who)
    assert digest(brain) == before
    assert inbox.turn_status(brain, ids["turn"], identity=SYSTEM)["status"] == "pending"


@pytest.mark.parametrize(
    "function",
    [
        mc.search,
        mc.get_trace,
        mc.list_traces,
        mc.add_trace,
        mc.add_traces,
        mc.update_trace,
        mc.delete_trace,
        mc.merge_traces,
        inbox.accept_turns,
        inbox.accept_turn,
        inbox.turn_status,
        proposals.list_proposals,
        proposals.review,
        forget.forget_scope_id,
    ],
)
def test_the_identity_is_a_required_argument_never_a_default(function: Any) -> None:
    parameter = inspect.signature(function).parameters["identity"]
    assert parameter.default is inspect.Parameter.empty
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY


def test_every_tenant_is_an_explicit_identity(brain: mc.Brain, ids: dict[str, str]) -> None:
    everyone = {
        h.trace.id for h in mc.search(brain, "otters", embedder=None, identity=SYSTEM).results
    }
    assert everyone == {ids["bob"], ids["ann"]}
    bob = SYSTEM.acting_as({"bob"})
    assert [
        h.trace.id for h in mc.search(brain, "otters", embedder=None, identity=bob).results
    ] == [ids["bob"]]
