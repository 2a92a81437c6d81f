"""The six memory tools through call_tool: every behaviour and every refusal."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from sqlalchemy import text

import memory_core as mc
from memory_core.auth import SYSTEM
from memory_core.tools import TOOL_SCHEMAS, anthropic_tools, openai_tools
from tests.conftest import TOOL_NAMES

Digest = Callable[[mc.Brain], str]


@pytest.fixture
def ctx(brain: mc.Brain) -> mc.ToolContext:
    return mc.ToolContext(brain, SYSTEM, scope_ids={"user": "u-1", "thread": "t-9"})


def call(ctx: mc.ToolContext, name: str, **arguments: Any) -> dict[str, Any]:
    return mc.call_tool(name, arguments, ctx)


def add(ctx: mc.ToolContext, content: str, **kw: Any) -> str:
    result = call(ctx, "memory_add", content=content, **kw)
    assert "error" not in result, result
    return str(result["traceId"])


# -- schemas -----------------------------------------------------------------


def test_every_tool_has_a_valid_json_schema_and_description() -> None:
    assert list(TOOL_SCHEMAS) == TOOL_NAMES
    for name, spec in TOOL_SCHEMAS.items():
        Draft202012Validator.check_schema(spec["parameters"])
        assert spec["description"], name
        assert spec["parameters"]["type"] == "object"
        json.dumps(spec)  # plain JSON, usable as a function definition


def test_schemas_come_in_openai_and_anthropic_shapes() -> None:
    oa = openai_tools()
    assert [t["function"]["name"] for t in oa] == list(TOOL_SCHEMAS)
    assert all(t["type"] == "function" and "parameters" in t["function"] for t in oa)
    an = anthropic_tools()
    assert [t["name"] for t in an] == list(TOOL_SCHEMAS)
    assert all("input_schema" in t and re.fullmatch(r"[a-z_]+", t["name"]) for t in an)


def test_unknown_tool_and_non_object_arguments_are_error_results(ctx: mc.ToolContext) -> None:
    assert mc.call_tool("memory_fly", {}, ctx)["error"]["code"] == "invalid_argument"
    assert mc.call_tool("memory_add", ["x"], ctx)["error"]["code"] == "invalid_argument"


# -- memory_add --------------------------------------------------------------


def test_add_stores_a_full_strength_trace_with_hash_and_context_scope_id(
    ctx: mc.ToolContext,
) -> None:
    trace_id = add(ctx, "User prefers dark mode.", type="semantic", tags=["ui"])
    assert re.fullmatch(
        r"mt_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", trace_id
    )
    trace = mc.get_trace(ctx.brain, trace_id, identity=SYSTEM)
    assert trace.strength == 1.0
    assert trace.type == "semantic"
    assert trace.scope == "user"
    assert trace.scope_id == "u-1"
    assert trace.tags == ["ui"]
    assert trace.content_hash == (
        __import__("hashlib").sha256(b"User prefers dark mode.").hexdigest()
    )


def test_add_defaults_to_episodic_user_and_uses_the_scope_s_own_id(ctx: mc.ToolContext) -> None:
    t1 = mc.get_trace(ctx.brain, add(ctx, "plain"), identity=SYSTEM)
    assert (t1.type, t1.scope, t1.scope_id) == ("episodic", "user", "u-1")
    t2 = mc.get_trace(ctx.brain, add(ctx, "in the thread", scope="thread"), identity=SYSTEM)
    assert (t2.scope, t2.scope_id) == ("thread", "t-9")
    # No organization id named: refused, rather than stored for everyone to see.
    refused = call(ctx, "memory_add", content="org wide", scope="organization")
    assert refused["error"]["code"] == "forbidden"
    assert "X-Reverie-Organization" in refused["error"]["message"]


def test_added_trace_is_searchable_as_soon_as_the_call_returns(ctx: mc.ToolContext) -> None:
    trace_id = add(ctx, "The staging cluster runs on arm64 nodes.")
    hits = call(ctx, "memory_search", query="arm64")["results"]
    assert [h["id"] for h in hits] == [trace_id]


def test_adding_the_same_content_twice_returns_the_trace_already_there(
    ctx: mc.ToolContext, brain: mc.Brain
) -> None:
    first = add(ctx, "same words")
    again = call(ctx, "memory_add", content="same words")
    assert again == {"traceId": first, "existing": True}
    # Another scope id, or another scope, is another memory.
    other = mc.ToolContext(brain, SYSTEM, scope_ids={"user": "u-2"})
    assert add(other, "same words") != first
    assert add(ctx, "same words", scope="thread") != first
    mc.delete_trace(brain, first, identity=SYSTEM)
    assert add(ctx, "same words") != first


@pytest.mark.parametrize(
    "arguments",
    [
        {"content": "x", "type": "feeling"},
        {"content": "x", "scope": "galaxy"},
        {"content": ""},
        {"content": "   "},
        {"type": "semantic"},
        {"content": 42},
        {"content": "x", "tags": "ui"},
        {"content": "x", "tags": [""]},
        {"content": "x", "tags": [1]},
        {"content": "x", "colour": "red"},
    ],
)
def test_add_refusals_are_error_results_that_store_nothing(
    ctx: mc.ToolContext, digest: Digest, arguments: dict[str, Any]
) -> None:
    before = digest(ctx.brain)
    result = mc.call_tool("memory_add", arguments, ctx)
    assert result["error"]["code"] == "invalid_argument"
    assert result["error"]["message"]
    assert digest(ctx.brain) == before


def test_core_add_refuses_bad_values_even_without_schema_validation(
    brain: mc.Brain, digest: Digest
) -> None:
    before = digest(brain)
    for kwargs in ({"type": "feeling"}, {"scope": "galaxy"}, {"importance": 2.0}):
        with pytest.raises(mc.InvalidArgument):
            mc.add_trace(brain, "x", **kwargs, identity=SYSTEM)
    with pytest.raises(mc.InvalidArgument):
        mc.add_trace(brain, "", identity=SYSTEM)
    assert digest(brain) == before


def test_a_batch_with_one_bad_item_stores_none_of_it(brain: mc.Brain, digest: Digest) -> None:
    before = digest(brain)
    with pytest.raises(mc.InvalidArgument):
        mc.add_traces(
            brain, [mc.NewTrace("good"), mc.NewTrace("bad", type="nope")], identity=SYSTEM
        )
    assert digest(brain) == before


# -- memory_update -----------------------------------------------------------


def test_update_content_recomputes_hash_drops_embeddings_and_reindexes(
    ctx: mc.ToolContext,
) -> None:
    trace_id = add(ctx, "User likes tea.")
    with ctx.brain.transaction() as conn:
        conn.execute(
            text(
                "INSERT INTO trace_embeddings(trace_id, model, dim, vector, created_at) "
                "VALUES (:id, 'm', 1, :v, 0)"
            ),
            {"id": trace_id, "v": bytes(4)},
        )
    old = mc.get_trace(ctx.brain, trace_id, identity=SYSTEM)
    assert call(ctx, "memory_update", traceId=trace_id, content="User likes coffee.") == {
        "updated": True
    }
    new = mc.get_trace(ctx.brain, trace_id, identity=SYSTEM)
    assert new.content == "User likes coffee."
    assert new.content_hash != old.content_hash
    assert new.version == old.version + 1
    with ctx.brain.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM trace_embeddings").scalar() == 0
    assert call(ctx, "memory_search", query="tea")["results"] == []
    assert [h["id"] for h in call(ctx, "memory_search", query="coffee")["results"]] == [trace_id]


def test_update_tags_only_keeps_content_and_embeddings(ctx: mc.ToolContext) -> None:
    trace_id = add(ctx, "User likes tea.", tags=["drink"])
    with ctx.brain.transaction() as conn:
        conn.execute(
            text(
                "INSERT INTO trace_embeddings(trace_id, model, dim, vector, created_at) "
                "VALUES (:id, 'm', 1, :v, 0)"
            ),
            {"id": trace_id, "v": bytes(4)},
        )
    assert call(ctx, "memory_update", traceId=trace_id, tags=["beverage"])["updated"] is True
    trace = mc.get_trace(ctx.brain, trace_id, identity=SYSTEM)
    assert (trace.content, trace.tags) == ("User likes tea.", ["beverage"])
    with ctx.brain.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM trace_embeddings").scalar() == 1
    assert call(ctx, "memory_search", query="beverage")["results"][0]["id"] == trace_id
    assert call(ctx, "memory_search", query="drink")["results"] == []


def test_update_answers_false_for_unknown_deleted_or_empty(
    ctx: mc.ToolContext, digest: Digest
) -> None:
    trace_id = add(ctx, "soon gone")
    keep = add(ctx, "kept")
    call(ctx, "memory_delete", traceId=trace_id)
    before = digest(ctx.brain)
    assert call(ctx, "memory_update", traceId="mt_nope", content="x") == {"updated": False}
    assert call(ctx, "memory_update", traceId=trace_id, content="back?") == {"updated": False}
    assert call(ctx, "memory_update", traceId=keep) == {"updated": False}
    assert digest(ctx.brain) == before


@pytest.mark.parametrize(
    "arguments",
    [{"content": ""}, {"tags": [""]}, {"tags": "x"}, {"content": 3}, {"extra": 1}],
)
def test_update_refusals_change_nothing(
    ctx: mc.ToolContext, digest: Digest, arguments: dict[str, Any]
) -> None:
    trace_id = add(ctx, "stays as it is", tags=["a"])
    before = digest(ctx.brain)
    result = mc.call_tool("memory_update", {"traceId": trace_id, **arguments}, ctx)
    assert result["error"]["code"] == "invalid_argument"
    assert digest(ctx.brain) == before


def test_update_with_a_stale_version_is_a_conflict_and_changes_nothing(
    brain: mc.Brain, digest: Digest
) -> None:
    trace_id = mc.add_trace(brain, "v1", identity=SYSTEM)
    read = mc.get_trace(brain, trace_id, identity=SYSTEM)
    mc.update_trace(brain, trace_id, content="v2 by someone else", identity=SYSTEM)
    before = digest(brain)
    with pytest.raises(mc.Conflict):
        mc.update_trace(
            brain, trace_id, content="v2 by me", expected_version=read.version, identity=SYSTEM
        )
    assert digest(brain) == before
    assert mc.get_trace(brain, trace_id, identity=SYSTEM).content == "v2 by someone else"


def test_racing_updates_each_apply_whole_or_fail_cleanly(brain: mc.Brain) -> None:
    """Threads read a version, then compare-and-set: exactly one wins per round."""
    trace_id = mc.add_trace(brain, "start", tags=["t0"], identity=SYSTEM)
    rounds, workers = 20, 4
    wins: list[str] = []
    conflicts = 0
    lock = threading.Lock()

    def worker(n: int) -> None:
        nonlocal conflicts
        for r in range(rounds):
            barrier.wait()
            version = mc.get_trace(brain, trace_id, identity=SYSTEM).version
            barrier.wait()
            try:
                mc.update_trace(
                    brain,
                    trace_id,
                    content=f"w{n} r{r}",
                    tags=[f"w{n}", f"r{r}"],
                    expected_version=version,
                    identity=SYSTEM,
                )
                with lock:
                    wins.append(f"w{n} r{r}")
            except mc.Conflict:
                with lock:
                    conflicts += 1

    barrier = threading.Barrier(workers)
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == rounds
    assert conflicts == rounds * (workers - 1)
    final = mc.get_trace(brain, trace_id, identity=SYSTEM)
    # Content and tags always come from the same write: never half-applied.
    w, r = final.content.split()
    assert final.tags == [w, r]
    assert final.content == wins[-1]


# -- memory_delete -----------------------------------------------------------


def test_delete_is_soft_and_hides_the_trace_from_search(ctx: mc.ToolContext) -> None:
    trace_id = add(ctx, "ephemeral note about kiwis")
    assert call(ctx, "memory_delete", traceId=trace_id) == {"deleted": True}
    assert call(ctx, "memory_search", query="kiwis")["results"] == []
    kept = mc.get_trace(ctx.brain, trace_id, include_deleted=True, identity=SYSTEM)
    assert kept.deleted and kept.content == "ephemeral note about kiwis"
    with pytest.raises(mc.NotFound):
        mc.get_trace(ctx.brain, trace_id, identity=SYSTEM)


def test_delete_answers_false_when_not_found_or_already_deleted(
    ctx: mc.ToolContext, digest: Digest
) -> None:
    trace_id = add(ctx, "x")
    call(ctx, "memory_delete", traceId=trace_id)
    before = digest(ctx.brain)
    assert call(ctx, "memory_delete", traceId=trace_id) == {"deleted": False}
    assert call(ctx, "memory_delete", traceId="mt_unknown") == {"deleted": False}
    assert call(ctx, "memory_delete", traceId="")["error"]["code"] == "invalid_argument"
    assert digest(ctx.brain) == before


# -- memory_merge ------------------------------------------------------------


def _retrieve(brain: mc.Brain, trace_id: str, times: int) -> None:
    with brain.transaction() as conn:
        conn.execute(
            text(
                "UPDATE memory_traces SET retrieval_count = :n, last_accessed = :at WHERE id = :id"
            ),
            {"n": times, "at": 1000.0 + times, "id": trace_id},
        )


def test_merge_keeps_the_most_retrieved_and_joins_contents_in_given_order(
    ctx: mc.ToolContext,
) -> None:
    a = add(ctx, "likes docker", tags=["ops"])
    b = add(ctx, "deploys on fridays", tags=["ops", "deploy"])
    c = add(ctx, "uses blue-green", tags=["strategy"])
    _retrieve(ctx.brain, b, 5)
    _retrieve(ctx.brain, c, 2)
    result = call(ctx, "memory_merge", traceIds=[a, b, c])
    assert result == {"survivorId": b, "deletedIds": [a, c]}
    survivor = mc.get_trace(ctx.brain, b, identity=SYSTEM)
    assert survivor.content == "likes docker | deploys on fridays | uses blue-green"
    assert survivor.tags == ["ops", "deploy", "strategy"]
    assert survivor.retrieval_count == 7
    assert survivor.last_accessed == 1005.0
    for gone in (a, c):
        t = mc.get_trace(ctx.brain, gone, include_deleted=True, identity=SYSTEM)
        assert t.deleted and t.deleted_reason == f"merged into {b}"
    found = call(ctx, "memory_search", query="docker")["results"]
    assert [h["id"] for h in found] == [b]


def test_merge_tie_keeps_the_first_given_and_takes_merged_content(ctx: mc.ToolContext) -> None:
    a = add(ctx, "one")
    b = add(ctx, "two")
    result = call(ctx, "memory_merge", traceIds=[b, a], mergedContent="one and two")
    assert result == {"survivorId": b, "deletedIds": [a]}
    assert mc.get_trace(ctx.brain, b, identity=SYSTEM).content == "one and two"


@pytest.mark.parametrize(
    "case",
    ["single", "unknown", "deleted", "duplicate", "empty_content", "not_a_list"],
)
def test_merge_refusals_change_nothing(ctx: mc.ToolContext, digest: Digest, case: str) -> None:
    a = add(ctx, "alpha")
    b = add(ctx, "beta")
    gone = add(ctx, "gamma")
    call(ctx, "memory_delete", traceId=gone)
    arguments: dict[str, Any] = {
        "single": {"traceIds": [a]},
        "unknown": {"traceIds": [a, b, "mt_missing"]},
        "deleted": {"traceIds": [a, gone]},
        "duplicate": {"traceIds": [a, a]},
        "empty_content": {"traceIds": [a, b], "mergedContent": ""},
        "not_a_list": {"traceIds": a},
    }[case]
    before = digest(ctx.brain)
    result = mc.call_tool("memory_merge", arguments, ctx)
    assert result["error"]["code"] in {"invalid_argument", "not_found"}
    assert digest(ctx.brain) == before


# -- memory_search -----------------------------------------------------------


@pytest.fixture
def library(ctx: mc.ToolContext) -> dict[str, str]:
    return {
        "dark": add(ctx, "User prefers dark mode and TypeScript.", type="semantic", tags=["ui"]),
        "colour": add(ctx, "The user's favourite colour is teal.", type="semantic"),
        "deploy": add(ctx, "Deployment happens with Docker Compose.", type="procedural"),
        "staging": add(ctx, "Never deploy to staging on Mondays.", tags=["deploy", "rule"]),
        "thread": add(ctx, "In this thread we talk about deployment.", scope="thread"),
    }


def ids(result: dict[str, Any]) -> list[str]:
    assert "error" not in result, result
    return [h["id"] for h in result["results"]]


def test_search_ranks_by_bm25_best_first(ctx: mc.ToolContext, library: dict[str, str]) -> None:
    add(ctx, "teal teal teal, the colour teal")
    found = ids(call(ctx, "memory_search", query="teal"))
    assert len(found) == 2
    assert found[1] == library["colour"]  # fewer matching terms ranks lower
    scores = [h["score"] for h in call(ctx, "memory_search", query="teal")["results"]]
    assert scores == sorted(scores, reverse=True)


def test_search_takes_fts5_operators(ctx: mc.ToolContext, library: dict[str, str]) -> None:
    assert set(ids(call(ctx, "memory_search", query="deplo*"))) == {
        library["deploy"],
        library["staging"],
        library["thread"],
    }
    assert ids(call(ctx, "memory_search", query='"dark mode"')) == [library["dark"]]
    assert ids(call(ctx, "memory_search", query="deploy AND staging")) == [library["staging"]]
    assert set(ids(call(ctx, "memory_search", query="teal OR typescript"))) == {
        library["colour"],
        library["dark"],
    }
    assert set(ids(call(ctx, "memory_search", query="deployment NOT monday"))) == {
        library["deploy"],
        library["thread"],
    }


def test_search_porter_stems(ctx: mc.ToolContext, library: dict[str, str]) -> None:
    # Porter's stemmer (SQLite's FTS5) keeps "deploy" ("deploi") apart from
    # "deployment"; Snowball's English stemmer (PostgreSQL's) joins them.
    joined = [library["staging"]] if ctx.brain.dialect == "postgresql" else []
    assert set(ids(call(ctx, "memory_search", query="deployments"))) == {
        library["deploy"],
        library["thread"],
        *joined,
    }
    assert ids(call(ctx, "memory_search", query="preferring")) == [library["dark"]]


def test_natural_language_question_falls_back_instead_of_erroring(
    ctx: mc.ToolContext, library: dict[str, str]
) -> None:
    found = ids(call(ctx, "memory_search", query="what's the user's favourite colour?"))
    assert found[0] == library["colour"]
    for q in ('unbalanced "quote', "(((", "AND", "colour:teal", "NEAR(", "a - b", "*"):
        result = call(ctx, "memory_search", query=q)
        assert "error" not in result, (q, result)


def test_plain_words_that_and_to_nothing_are_retried_as_natural_language(
    ctx: mc.ToolContext, library: dict[str, str]
) -> None:
    found = ids(call(ctx, "memory_search", query="teal dark"))
    assert set(found) == {library["colour"], library["dark"]}


def test_search_filters_type_scope_and_tags(ctx: mc.ToolContext, library: dict[str, str]) -> None:
    q = "deplo* OR teal OR dark"
    assert ids(call(ctx, "memory_search", query=q, type="procedural")) == [library["deploy"]]
    assert ids(call(ctx, "memory_search", query=q, scope="thread")) == [library["thread"]]
    assert ids(call(ctx, "memory_search", query=q, tags=["deploy", "rule"])) == [library["staging"]]
    assert ids(call(ctx, "memory_search", query=q, tags=["deploy", "nope"])) == []


def test_a_context_naming_a_user_sees_only_that_users_traces(brain: mc.Brain) -> None:
    mine = mc.ToolContext(brain, SYSTEM, scope_ids={"user": "alice"})
    theirs = mc.ToolContext(brain, SYSTEM, scope_ids={"user": "bob"})
    a = add(mine, "alice owns a bicycle")
    b = add(theirs, "bob owns a bicycle")
    assert ids(call(mine, "memory_search", query="bicycle", scope="user")) == [a]
    assert ids(call(mine, "memory_search", query="bicycle")) == [a]
    assert ids(call(theirs, "memory_search", query="bicycle")) == [b]
    # The local operator, naming no one, sees both.
    assert sorted(
        ids(call(mc.ToolContext(brain, SYSTEM), "memory_search", query="bicycle"))
    ) == sorted([a, b])


def test_filters_apply_before_the_limit(ctx: mc.ToolContext) -> None:
    for i in range(30):
        add(ctx, f"apple pie recipe number {i} apple apple", type="procedural")
    wanted = add(ctx, "an apple in passing", type="semantic")
    assert ids(call(ctx, "memory_search", query="apple", type="semantic", limit=1)) == [wanted]


def test_search_limit_default_and_bounds(ctx: mc.ToolContext, digest: Digest) -> None:
    for i in range(15):
        add(ctx, f"walrus fact {i}")
    assert len(ids(call(ctx, "memory_search", query="walrus"))) == 10
    assert len(ids(call(ctx, "memory_search", query="walrus", limit=100))) == 15
    assert len(ids(call(ctx, "memory_search", query="walrus", limit=1))) == 1
    before = digest(ctx.brain)
    for bad in (0, 101, -1, "5", 2.5, True):
        result = call(ctx, "memory_search", query="walrus", limit=bad)
        assert result["error"]["code"] == "invalid_argument", bad
    assert digest(ctx.brain) == before


@pytest.mark.parametrize(
    "arguments",
    [{}, {"query": ""}, {"query": "x", "type": "feeling"}, {"query": "x", "scope": "moon"}],
)
def test_search_refusals(ctx: mc.ToolContext, arguments: dict[str, Any]) -> None:
    assert mc.call_tool("memory_search", arguments, ctx)["error"]["code"] == "invalid_argument"


def test_search_never_writes(ctx: mc.ToolContext, digest: Digest, library: dict[str, str]) -> None:
    before = digest(ctx.brain)
    call(ctx, "memory_search", query="deploy")
    call(ctx, "memory_search", query="what is deployed?")
    assert digest(ctx.brain) == before


# -- memory_reflect ----------------------------------------------------------


def test_reflect_is_registered_and_answers_a_clear_not_enabled_error(
    brain: mc.Brain, digest: Digest
) -> None:
    assert "memory_reflect" in TOOL_SCHEMAS
    before = digest(brain)
    result = call(mc.ToolContext(brain, SYSTEM), "memory_reflect")
    assert result["error"]["code"] == "not_enabled"
    assert "not available" in result["error"]["message"]
    assert digest(brain) == before


def test_reflect_runs_the_pass_the_context_provides(brain: mc.Brain) -> None:
    ran: list[bool] = []

    def reflect() -> dict[str, Any]:
        ran.append(True)
        return {"pruned": 0, "merged": 0, "derived": 0, "compacted": 0, "durationMs": 1}

    everyone = mc.ToolContext(brain, SYSTEM, reflect=reflect)
    assert call(everyone, "memory_reflect", topic="anything")["durationMs"] == 1
    # A pass spans the whole brain: a call acting for a user is refused, and runs none.
    for_a_user = mc.ToolContext(brain, SYSTEM, {"user": "u-1"}, reflect=reflect)
    refused = call(for_a_user, "memory_reflect")
    assert refused["error"]["code"] == "forbidden" and "whole brain" in refused["error"]["message"]
    assert ran == [True]


def test_search_as_of_recalls_what_was_valid_then(ctx: mc.ToolContext) -> None:
    trace_id = add(ctx, "The user lives in Porto.")
    happened = mc.get_trace(ctx.brain, trace_id, identity=SYSTEM).occurred_at
    call(ctx, "memory_delete", traceId=trace_id)
    assert call(ctx, "memory_search", query="Porto")["results"] == []
    then = call(ctx, "memory_search", query="Porto", asOf=repr(happened))
    assert ids(then) == [trace_id]
    later = call(ctx, "memory_search", query="Porto", asOf="2999-01-01T00:00:00Z")
    assert ids(later) == []
    refused = call(ctx, "memory_search", query="Porto", asOf="whenever")
    assert refused["error"]["code"] and "asOf" in refused["error"]["message"]
