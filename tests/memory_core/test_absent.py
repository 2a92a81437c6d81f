"""One convention for "absent": an operation on an id the caller names raises NotFound
(for an unknown id, a deleted trace and another tenant's alike) and changes nothing; a
lookup answers None."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import memory_core as mc
from memory_core.auth import SYSTEM

Digest = Callable[[mc.Brain], str]
BOB = SYSTEM.acting_as({"bob"})

OPERATIONS: dict[str, Callable[[mc.Brain, str, str], Any]] = {
    "get_trace": lambda b, tid, own: mc.get_trace(b, tid, identity=BOB),
    "update_trace": lambda b, tid, own: mc.update_trace(b, tid, content="new", identity=BOB),
    "delete_trace": lambda b, tid, own: mc.delete_trace(b, tid, identity=BOB),
    "merge_traces": lambda b, tid, own: mc.merge_traces(b, [tid, own], identity=BOB),
}


@pytest.fixture
def absent(brain: mc.Brain) -> dict[str, str]:
    deleted = mc.add_trace(brain, "deleted since", scope_id="bob", identity=SYSTEM)
    mc.delete_trace(brain, deleted, identity=SYSTEM)
    return {
        "unknown": "mt_nowhere",
        "deleted": deleted,
        "another's": mc.add_trace(brain, "ann's secret", scope_id="ann", identity=SYSTEM),
        "own": mc.add_trace(brain, "bob's own", scope_id="bob", identity=SYSTEM),
    }


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("which", ["unknown", "deleted", "another's"])
def test_an_operation_on_an_absent_id_raises_not_found_and_changes_nothing(
    brain: mc.Brain, digest: Digest, absent: dict[str, str], operation: str, which: str
) -> None:
    before = digest(brain)
    with pytest.raises(mc.NotFound):
        OPERATIONS[operation](brain, absent[which], absent["own"])
    assert digest(brain) == before


def test_an_update_naming_no_field_is_a_bad_argument(brain: mc.Brain) -> None:
    trace_id = mc.add_trace(brain, "kept as it is", identity=SYSTEM)
    with pytest.raises(mc.InvalidArgument, match="content and/or tags"):
        mc.update_trace(brain, trace_id, identity=SYSTEM)


def test_a_lookup_answers_none_for_nothing_found(brain: mc.Brain, digest: Digest) -> None:
    before = digest(brain)
    assert (
        mc.said_again(brain, "never stored", scope="user", scope_id=None, identity=SYSTEM) is None
    )
    assert digest(brain) == before  # nothing found, nothing written
    trace_id = mc.add_trace(brain, "stored once", identity=SYSTEM)
    found = mc.said_again(brain, "stored once", scope="user", scope_id=None, identity=SYSTEM)
    assert found is not None and found.id == trace_id
