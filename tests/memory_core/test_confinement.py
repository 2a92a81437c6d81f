"""Confinement in the library: per (scope, scope id) when a caller names whom it acts for,
and never the whole brain for a confined identity -- tokens and passes alike."""

from __future__ import annotations

import pytest

import memory_core as mc
from memory_core import auth, proposals
from memory_core.auth import OPEN, SYSTEM
from memory_core.consolidation.dream import list_passes, pass_report, undo_pass
from memory_core.traces import tags


@pytest.fixture
def traces(brain: mc.Brain) -> dict[str, str]:
    return {
        "alice": mc.add_trace(brain, "Alice's PIN is 1234.", scope_id="alice", identity=SYSTEM),
        "thread": mc.add_trace(
            brain,
            "Thread alice: the PIN reminder.",
            scope="thread",
            scope_id="alice",
            tags=["pin"],
            identity=SYSTEM,
        ),
        "bob": mc.add_trace(brain, "Bob's PIN is 9876.", scope_id="bob", identity=SYSTEM),
    }


def test_naming_a_thread_never_opens_a_user_of_that_id(
    brain: mc.Brain, settings: mc.Settings, traces: dict[str, str]
) -> None:
    bob = OPEN.acting_as({"user": "bob", "thread": "alice"})
    listed = {t.id for t in mc.list_traces(brain, identity=bob).traces}
    assert listed == {traces["bob"], traces["thread"]}
    found = {h.trace.id for h in mc.search(brain, "PIN", identity=bob, embedder=None).results}
    assert traces["alice"] not in found and traces["thread"] in found
    with pytest.raises(mc.NotFound):
        mc.get_trace(brain, traces["alice"], identity=bob)
    assert tags.tag_counts(brain, identity=bob) == {"pin": 1}
    with pytest.raises(mc.Forbidden):
        mc.add_trace(brain, "x", scope="user", scope_id="alice", identity=bob)
    more = mc.add_trace(brain, "y", scope="thread", identity=bob)  # to its thread's id
    assert mc.get_trace(brain, more, identity=SYSTEM).scope_id == "alice"
    draft = proposals.ProposalDraft("prune", [traces["alice"]], "t", {"strength": 0.1}, "p")
    proposals.create_proposals(brain, settings, [draft], None)
    assert proposals.list_proposals(brain, settings, identity=bob) == []
    # A token pinned to an id sees it in every scope, as documented.
    pinned = auth.Identity("app", frozenset({"read"}), frozenset({"alice"}))
    assert {t.id for t in mc.list_traces(brain, identity=pinned).traces} == {
        traces["alice"],
        traces["thread"],
        more,
    }
    # ... and naming a scope narrows it, never widens it.
    narrowed = pinned.acting_as({"thread": "alice"})
    assert {t.id for t in mc.list_traces(brain, identity=narrowed).traces} == {
        traces["thread"],
        more,
    }
    with pytest.raises(mc.Forbidden):
        pinned.acting_as({"user": "bob"})


@pytest.mark.parametrize("blank", ["", " ", "\t"])
def test_a_blank_name_is_refused_never_naming_nobody(blank: str) -> None:
    with pytest.raises(mc.InvalidIdentity, match="blank"):
        OPEN.acting_as({"user": blank})
    assert OPEN.acting_as({"user": None}) is OPEN


def _confined() -> list[auth.Identity]:
    pinned_admin = auth.Identity("bob-admin", frozenset({"admin"}), frozenset({"bob"}), "t1")
    return [pinned_admin, OPEN.acting_as({"user": "bob"}), SYSTEM.acting_as(["bob"])]


@pytest.mark.parametrize("who", _confined(), ids=["pinned-admin", "open-as-bob", "system-as-bob"])
def test_a_confined_identity_never_manages_tokens_or_passes(
    brain: mc.Brain, who: auth.Identity
) -> None:
    _, token = auth.create_token(brain, "alice-app", ["read"], ["alice"], identity=OPEN)
    before = auth.list_tokens(brain, identity=OPEN)
    for act in (
        lambda: auth.list_tokens(brain, identity=who),
        lambda: auth.create_token(brain, "root2", ["admin"], identity=who),
        lambda: auth.create_token(brain, "bob2", ["read"], ["bob"], identity=who),
        lambda: auth.reset_token(brain, "alice-app", identity=who),
        lambda: auth.revoke_token(brain, "alice-app", identity=who),
        lambda: auth.grant_anonymous(brain, ["read"], identity=who),
        lambda: list_passes(brain, identity=who),
        lambda: pass_report(brain, "dream_x", identity=who),
        lambda: undo_pass(brain, "dream_x", identity=who),
    ):
        with pytest.raises(mc.Forbidden, match="whole brain"):
            act()
    assert auth.list_tokens(brain, identity=OPEN) == before
    assert auth.authenticate(brain, token).name == "alice-app"


def test_revocation_is_final(brain: mc.Brain) -> None:
    _, token = auth.create_token(brain, "agent", ["read"], identity=OPEN)
    auth.revoke_token(brain, "agent", identity=OPEN)
    before = auth.list_tokens(brain, identity=OPEN)
    with pytest.raises(mc.Conflict, match="revocation is final"):
        auth.reset_token(brain, "agent", identity=OPEN)
    with pytest.raises(mc.Conflict, match="revoked"):
        auth.create_token(brain, "agent", ["read"], identity=OPEN)
    assert auth.list_tokens(brain, identity=OPEN) == before
    with pytest.raises(mc.Unauthorized):
        auth.authenticate(brain, token)


def test_the_last_admin_token_may_not_revoke_itself(brain: mc.Brain) -> None:
    _, root = auth.create_token(brain, "root", ["admin"], identity=OPEN)
    auth.create_token(brain, "bob-admin", ["admin"], ["bob"], identity=OPEN)  # pinned: no help
    me = auth.authenticate(brain, root)
    with pytest.raises(mc.Conflict, match="last admin token"):
        auth.revoke_token(brain, "root", identity=me)
    assert auth.authenticate(brain, root).name == "root"
    # With a second unpinned admin it may; and the operator (memctl) always may.
    auth.create_token(brain, "root2", ["admin"], identity=me)
    auth.revoke_token(brain, "root", identity=me)
    auth.revoke_token(brain, "root2", identity=OPEN)
    listed = auth.list_tokens(brain, identity=OPEN)
    assert all(t.revoked_at for t in listed if t.name.startswith("root"))


def test_a_session_rechecks_its_token_within_its_period(brain: mc.Brain) -> None:
    now = [100.0]
    _, token = auth.create_token(brain, "agent", ["read"], identity=OPEN)
    session = auth.Session(brain, token, {"user": "bob"}, every=2.0, clock=lambda: now[0])
    assert session.identity().scope_ids == frozenset({"bob"})
    auth.revoke_token(brain, "agent", identity=OPEN)
    now[0] += 1.9
    assert session.identity().name.startswith("agent")  # cached, within the period
    now[0] += 0.2
    with pytest.raises(mc.Unauthorized):
        session.identity()
    # The open identity stops once a token works.
    opened = auth.Session(brain, None, {}, every=2.0, clock=lambda: now[0])
    assert opened.identity() is OPEN
    auth.create_token(brain, "first", ["read"], identity=OPEN)
    now[0] += 2.0
    with pytest.raises(mc.Unauthorized, match="has tokens"):
        opened.identity()


def test_an_identity_acting_for_named_scopes_forgets_only_in_those(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    from memory_core.forget import forget_scope_id

    user = mc.add_trace(brain, "Alice's locker code is 4471.", scope_id="alice", identity=SYSTEM)
    thread = mc.add_trace(
        brain, "The alice thread planned a sale.", scope="thread", scope_id="alice", identity=SYSTEM
    )
    bob = OPEN.acting_as({"user": "bob", "thread": "alice"})
    for scope in (None, "user"):
        with pytest.raises(mc.Forbidden):
            forget_scope_id(brain, settings, "alice", scope=scope, identity=bob)
    assert mc.get_trace(brain, user, identity=SYSTEM).content.startswith("Alice's")
    assert forget_scope_id(brain, settings, "alice", scope="thread", identity=bob).traces == 1
    with pytest.raises(mc.NotFound):
        mc.get_trace(brain, thread, identity=SYSTEM)
    assert mc.get_trace(brain, user, identity=SYSTEM).content.startswith("Alice's")


def test_a_forgotten_users_tags_leave_what_regexes_match_against(
    brain: mc.Brain, settings: mc.Settings
) -> None:
    from memory_core.forget import forget_scope_id
    from memory_core.retrieval.tagvocab import TagVocabulary

    mc.add_trace(brain, "A note.", scope_id="zed", tags=["zed-diagnosis"], identity=SYSTEM)
    mc.add_trace(brain, "Another.", scope_id="amy", tags=["amy-diagnosis"], identity=SYSTEM)
    vocabulary = brain.state(TagVocabulary)
    with brain.read() as conn:
        assert vocabulary.matching(conn, None, "diagnosis") == ["amy-diagnosis", "zed-diagnosis"]
    forget_scope_id(brain, settings, "zed", identity=SYSTEM)
    with brain.read() as conn:
        assert vocabulary.matching(conn, None, "diagnosis") == ["amy-diagnosis"]
