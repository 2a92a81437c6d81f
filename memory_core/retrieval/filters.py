"""A search's hard filters and the checks of its arguments."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from memory_core.auth import Within
from memory_core.errors import InvalidArgument

MAX_LIMIT = 100


@dataclass(frozen=True)
class Filters:
    """The hard filters of a search; a trace failing one is never ranked."""

    type: str | None = None
    scope: str | None = None
    scope_id: str | None = None
    tags: tuple[str, ...] = ()
    as_of: float | None = None
    within: Within | None = None  # the part of the brain the caller is confined to
    # A tag expression as an SQL condition over ``t`` and its parameters (tagexpr).
    expression: tuple[str, dict[str, Any]] | None = None

    def only_active(self) -> bool:
        """Whether "not deleted" is the only filter (BM25 then ranks in the index alone)."""
        return (
            self.type is None
            and self.scope is None
            and self.scope_id is None
            and not self.tags
            and self.as_of is None
            and self.within is None
            and self.expression is None
        )

    def sql(self) -> tuple[str, dict[str, Any]]:
        """An SQL condition over ``t`` (memory_traces) and its parameters."""
        if self.as_of is None:
            clauses = ["t.deleted = 0"]
            params: dict[str, Any] = {}
        else:
            clauses = [
                "t.occurred_at <= :f_as_of",
                "(t.deleted = 0 OR coalesce(t.deleted_at, t.updated_at) > :f_as_of)",
            ]
            params = {"f_as_of": self.as_of}
        if self.type is not None:
            clauses.append("t.type = :f_type")
            params["f_type"] = self.type
        if self.scope is not None:
            clauses.append("t.scope = :f_scope")
            params["f_scope"] = self.scope
        if self.scope_id is not None:
            clauses.append("t.scope_id = :f_scope_id")
            params["f_scope_id"] = self.scope_id
        if self.within is not None:
            condition, values = self.within.sql("t", "f_within")
            clauses.append(condition)
            params.update(values)
        for i, tag in enumerate(self.tags):
            clauses.append(f"EXISTS (SELECT 1 FROM json_each(t.tags) WHERE value = :f_tag{i})")
            params[f"f_tag{i}"] = tag
        if self.expression is not None:
            condition, values = self.expression
            clauses.append(condition)
            params.update(values)
        return " AND ".join(clauses), params


def check_limit(limit: Any) -> int:
    """``limit`` when it is an integer from 1 to :data:`MAX_LIMIT`, else InvalidArgument."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be an integer from 1 to {MAX_LIMIT}; got {limit!r}")
    return limit


def check_as_of(value: Any) -> float | None:
    """``value`` as epoch seconds when it is a finite number (or None), else InvalidArgument."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidArgument(f"as_of must be a time (epoch seconds); got {value!r}")
    return float(value)


def check_min_score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidArgument(f"min_score must be a number from 0 to 1; got {value!r}")
    return float(value)
