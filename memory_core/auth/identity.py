"""Who calls and what it may do: capabilities, and confinement to scope ids.

An identity is confined to scope ids in one of two ways.  A token pinned to
scope ids (``memctl token create --scope-id bob``) sees those ids in every
scope.  A caller naming whom it acts for (``X-Reverie-User: bob``,
``memctl mcp --user bob``) is confined to exactly the (scope, scope id) pairs
it named: user ``bob`` and thread ``t1`` open bob's user memories and t1's
thread memories, never the user memories of someone whose id is ``t1``.

A confined identity never acts on the whole brain (:func:`brain_wide`): tokens,
dream passes and brain-wide counts belong to an identity confined to none.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from memory_core.brain.schema import SCOPES
from memory_core.errors import Forbidden, InvalidArgument, InvalidIdentity

READ, WRITE, DELETE, DREAM, ADMIN = "read", "write", "delete", "dream", "admin"
CAPABILITIES = (READ, WRITE, DELETE, DREAM, ADMIN)
MAX_SCOPE_ID_LENGTH = 256


@dataclass(frozen=True)
class Within:
    """The part of the brain a confined identity sees and writes: ``scope_ids`` in any
    scope, or only the (scope, scope id) pairs of ``scopes`` when the caller named them.

    As a set it is its scope ids (``"bob" in within``), whatever their scope.
    """

    scope_ids: frozenset[str]
    scopes: frozenset[tuple[str, str]] | None = None

    def admits(self, scope: str | None, scope_id: str | None) -> bool:
        """Whether a trace or turn of ``scope`` and ``scope_id`` is inside; without its
        scope, whether ``scope_id`` is one of the scope ids."""
        if self.scopes is not None and scope is not None:
            return (scope, scope_id) in self.scopes
        return scope_id in self.scope_ids

    def sql(self, alias: str = "", prefix: str = "within") -> tuple[str, dict[str, Any]]:
        """An SQL condition over the ``scope`` and ``scope_id`` columns (of ``alias``, when
        given) keeping rows inside, and its parameters (named ``prefix``...)."""
        at = f"{alias}." if alias else ""
        if self.scopes is None:
            names = [f":{prefix}{k}" for k in range(len(self.scope_ids))]
            params = {f"{prefix}{k}": v for k, v in enumerate(sorted(self.scope_ids))}
            return f"{at}scope_id IN ({', '.join(names) or 'NULL'})", params
        clauses, params = [], {}
        for k, (scope, scope_id) in enumerate(sorted(self.scopes)):
            clauses.append(f"({at}scope = :{prefix}_s{k} AND {at}scope_id = :{prefix}_i{k})")
            params |= {f"{prefix}_s{k}": scope, f"{prefix}_i{k}": scope_id}
        return f"({' OR '.join(clauses) or '0 = 1'})", params

    def __contains__(self, scope_id: object) -> bool:
        return scope_id in self.scope_ids

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.scope_ids))

    def __len__(self) -> int:
        return len(self.scope_ids)

    def describe(self) -> str:
        """``user bob, thread t1`` for named pairs; ``bob, carol`` for pinned ids."""
        if self.scopes is None:
            return ", ".join(sorted(self.scope_ids))
        return ", ".join(f"{scope} {scope_id}" for scope, scope_id in sorted(self.scopes))


def named_scopes(named: Mapping[str, str | None]) -> dict[str, str]:
    """The scope ids a caller names as the ones it acts for, by scope (None: not named).

    A blank one is refused (:class:`InvalidIdentity`): it is never taken for naming
    nobody, which would make the caller the local operator.
    """
    found = {}
    for scope, value in named.items():
        if scope not in SCOPES:
            raise InvalidIdentity(f"no scope {scope!r}; scopes: {', '.join(SCOPES)}")
        if value is None:
            continue
        if not value.strip():
            raise InvalidIdentity(
                f"the {scope} id a call acts for is blank (X-Reverie-{scope.title()} over "
                f"HTTP, --{scope} for memctl mcp): name one, or leave it out"
            )
        if len(value) > MAX_SCOPE_ID_LENGTH:
            raise InvalidArgument(f"scope id: longer than {MAX_SCOPE_ID_LENGTH} characters")
        found[scope] = value
    return found


@dataclass(frozen=True)
class Identity:
    """Who is calling: a name, capabilities, the scope ids it is confined to (None: any)
    and, when it named them, the (scope, scope id) pairs it acts for."""

    name: str
    capabilities: frozenset[str]
    scope_ids: frozenset[str] | None = None
    token_id: str | None = None
    scopes: frozenset[tuple[str, str]] | None = None

    def can(self, capability: str) -> bool:
        return ADMIN in self.capabilities or capability in self.capabilities

    def require(self, *capabilities: str) -> None:
        """:class:`Forbidden` unless this identity has every one of ``capabilities``."""
        missing = [c for c in capabilities if not self.can(c)]
        if missing:
            raise Forbidden(f"{self.name} may not {' or '.join(missing)} (it may {self._may()})")

    def _may(self) -> str:
        return ", ".join(c for c in CAPABILITIES if c in self.capabilities) or "nothing"

    @property
    def within(self) -> Within | None:
        """What this identity is confined to; None: the whole brain."""
        if self.scope_ids is None:
            return None
        return Within(self.scope_ids, self.scopes)

    def sees(self, scope_id: str | None, scope: str | None = None) -> bool:
        """Whether a trace or turn of ``scope_id`` (in ``scope``) exists for this identity."""
        within = self.within
        return within is None or within.admits(scope, scope_id)

    def scope_id_for(self, scope_id: str | None, scope: str | None = None) -> str | None:
        """The scope id a write (in ``scope``) by this identity goes to; :class:`Forbidden`
        if not its own.

        Written without a scope id, it goes to the id the caller named for that scope,
        or to a pinned identity's only one.
        """
        within = self.within
        if within is None:
            return scope_id
        if scope_id is None:
            scope_id = self._own_id(within, scope)
        if scope_id is None or not within.admits(scope, scope_id):
            where = f"{scope} " if scope and within.scopes is not None else ""
            raise Forbidden(
                f"{self.name} writes only to {within.describe()}; not {where}{scope_id!r}"
            )
        return scope_id

    def _own_id(self, within: Within, scope: str | None) -> str | None:
        if within.scopes is not None and scope is not None:
            return next((i for s, i in within.scopes if s == scope), None)
        return next(iter(within.scope_ids)) if len(within.scope_ids) == 1 else None

    def acting_as(self, named: Mapping[str, str | None] | Iterable[str]) -> Identity:
        """This identity confined to whom a caller says it acts for: a mapping of scope to
        scope id (an agent's user, thread, persona or organization: those pairs alone),
        or scope ids of any scope.  It then sees and writes only those, as a token pinned
        to them would.  A confined identity may name only what it has
        (:class:`Forbidden` otherwise); naming none changes nothing."""
        if isinstance(named, Mapping):
            pairs = frozenset(named_scopes(named).items())
            ids = frozenset(i for _, i in pairs)
        else:
            pairs, ids = None, frozenset(s for s in named if s)
            for scope_id in ids:
                if len(scope_id) > MAX_SCOPE_ID_LENGTH:
                    raise InvalidArgument(f"scope id: longer than {MAX_SCOPE_ID_LENGTH} characters")
        if not ids or (ids == self.scope_ids and pairs == self.scopes):
            return self
        within = self.within
        outside = sorted(
            f"{s} {i}" if s else i
            for s, i in (pairs or {(None, i) for i in ids})
            if within is not None and not within.admits(s, i)
        )
        if outside:
            raise Forbidden(f"{self.name} may not act for {', '.join(outside)}")
        if pairs is None and self.scopes is not None:  # keep what was named, narrowed
            pairs = frozenset(p for p in self.scopes if p[1] in ids)
        return Identity(
            name=f"{self.name.split(' as ')[0]} as {', '.join(sorted(ids))}",
            capabilities=self.capabilities,
            scope_ids=ids,
            token_id=self.token_id,
            scopes=pairs,
        )


# Whoever calls when no token is configured (loopback only) or through memctl.
OPEN = Identity("open", frozenset(CAPABILITIES))
# The brain's own work (ingestion, dream passes, imports): every tenant, explicitly.
SYSTEM = Identity("system", frozenset(CAPABILITIES))


def acting(identity: Any, *capabilities: str) -> Identity:
    """``identity`` when it is one with these capabilities; a library read or write
    acts for an identity, never for "whoever" (every tenant is :data:`SYSTEM` or an
    unpinned admin, named, never a default)."""
    if not isinstance(identity, Identity):
        raise Forbidden(
            f"a read or write of the brain acts for an identity; got {identity!r} "
            "(every tenant: memory_core.auth.SYSTEM)"
        )
    identity.require(*capabilities)
    return identity


def brain_wide(identity: Any, *capabilities: str, act: str) -> Identity:
    """``identity`` acting on the whole brain (``act``: managing tokens, a dream pass,
    brain-wide counts); :class:`Forbidden` for an identity confined to scope ids, a
    pinned token or a caller acting for someone alike, since the act spans every one."""
    found = acting(identity, *capabilities)
    within = found.within
    if within is not None:
        raise Forbidden(
            f"{found.name} acts only for {within.describe()}, and {act} spans the whole "
            "brain: only an identity confined to no scope id may"
        )
    return found
