"""A typed client of Reverie's HTTP API: :class:`Client`, and :class:`AsyncClient` for
asyncio code.  Both speak for one identity, set once::

    from reverie.client import Client

    memory = Client("http://127.0.0.1:8420", user="ana")  # token="rvt_..." when set
    memory.post_turn("I moved to Lisbon last month.", "How is it going?")
    for hit in memory.search("where does Ana live").results:
        print(hit.occurred_at, hit.content)

``user`` (and ``thread``, ``persona``, ``organization``) name whose memories these
are: on an open API the calls see and write only those scope ids, as a token
pinned to them would.  A refusal raises :class:`ApiError` (a subclass per kind:
:class:`NotFound`, :class:`Conflict`, ...) with the API's code and message.

Each method builds one :class:`_Call` -- method, path, parameters, the result type
-- and the two clients differ only in how they send it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

import httpx
from pydantic import BaseModel

from reverie import types

T = TypeVar("T", bound=BaseModel)

DEFAULT_URL = "http://127.0.0.1:8420"
SCOPE_HEADERS = {
    "user": "X-Reverie-User",
    "thread": "X-Reverie-Thread",
    "persona": "X-Reverie-Persona",
    "organization": "X-Reverie-Organization",
}


class ApiError(Exception):
    """The API refused a call; nothing was changed.  ``code`` is stable, ``message`` human."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class Unauthorized(ApiError):
    """401: a token is required, or this one is not valid."""


class Forbidden(ApiError):
    """403: this identity may not do that."""


class NotFound(ApiError):
    """404: no such thing, or not this identity's."""


class Conflict(ApiError):
    """409: it changed meanwhile, or is in another state."""


class InvalidArgument(ApiError):
    """422 (or 400, 413): a field or parameter is invalid; the message names it."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidArgument,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: InvalidArgument,
    422: InvalidArgument,
}


def _error(response: httpx.Response) -> ApiError:
    try:
        body = response.json()["error"]
        code, message = str(body["code"]), str(body["message"])
    except (ValueError, KeyError, TypeError):
        code, message = "http_error", response.text[:500] or response.reason_phrase
    return _BY_STATUS.get(response.status_code, ApiError)(response.status_code, code, message)


@dataclass(frozen=True)
class _Call(Generic[T]):
    """One request and the type its answer parses into."""

    method: str
    path: str
    result: type[T]
    params: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    accept: frozenset[int] = frozenset()  # error statuses whose body is still a result

    def request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        params = {k: _param(v) for k, v in self.params.items() if v is not None}
        return http.build_request(
            self.method, self.path, params=params, json=self.body, headers=self.headers
        )

    def answer(self, response: httpx.Response) -> T:
        if response.status_code >= 400 and response.status_code not in self.accept:
            raise _error(response)
        return self.result.model_validate(response.json())


def _param(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return ",".join(value)
    return value


def _when(value: datetime | float | None) -> str | float | None:
    return value.isoformat() if isinstance(value, datetime) else value


def _drop_none(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


class _Calls:
    """Every call of the API as a :class:`_Call`: both clients send these."""

    @staticmethod
    def post_turn(
        user: str | None,
        assistant: str | None,
        messages: Sequence[dict[str, Any]] | None,
        scope: str,
        scope_id: str,
        conversation_id: str | None,
        timestamp: datetime | float | None,
        metadata: dict[str, Any] | None,
        idempotency_key: str | None,
    ) -> _Call[types.TurnAccepted]:
        body = _drop_none(
            user=user,
            assistant=assistant,
            messages=list(messages) if messages is not None else None,
            scope=scope,
            scope_id=scope_id,
            conversation_id=conversation_id,
            timestamp=_when(timestamp),
            metadata=metadata,
            idempotency_key=idempotency_key,
        )
        return _Call("POST", "/v1/turns", types.TurnAccepted, body=body)

    @staticmethod
    def turn(turn_id: str) -> _Call[types.TurnStatus]:
        return _Call("GET", f"/v1/turns/{turn_id}", types.TurnStatus)

    @staticmethod
    def add(content: str, **fields: Any) -> _Call[types.MemoryAdded]:
        fields["tags"] = list(fields.get("tags", ()))
        fields["timestamp"] = _when(fields.get("timestamp"))
        body = _drop_none(content=content, **fields)
        return _Call("POST", "/v1/memories", types.MemoryAdded, body=body)

    @staticmethod
    def get(trace_id: str, include_deleted: bool) -> _Call[types.TraceOut]:
        params = {"include_deleted": "true"} if include_deleted else {}
        return _Call("GET", f"/v1/memories/{trace_id}", types.TraceOut, params=params)

    @staticmethod
    def update(
        trace_id: str, content: str | None, tags: Sequence[str] | None, version: int | None
    ) -> _Call[types.TraceOut]:
        headers = {"If-Match": str(version)} if version is not None else {}
        body = _drop_none(content=content, tags=list(tags) if tags is not None else None)
        path = f"/v1/memories/{trace_id}"
        return _Call("PATCH", path, types.TraceOut, body=body, headers=headers)

    @staticmethod
    def delete(trace_id: str) -> _Call[types.Deleted]:
        return _Call("DELETE", f"/v1/memories/{trace_id}", types.Deleted)

    @staticmethod
    def undo_supersession(trace_id: str) -> _Call[types.TraceOut]:
        path = f"/v1/memories/{trace_id}/supersession/undo"
        return _Call("POST", path, types.TraceOut)

    @staticmethod
    def merge(ids: Sequence[str], content: str | None) -> _Call[types.Merged]:
        body = _drop_none(ids=list(ids), content=content)
        return _Call("POST", "/v1/memories/merge", types.Merged, body=body)

    @staticmethod
    def search(query: str, **params: Any) -> _Call[types.SearchOut]:
        return _Call("GET", "/v1/search", types.SearchOut, params={"q": query, **params})

    @staticmethod
    def memories(**params: Any) -> _Call[types.MemoryPage]:
        return _Call("GET", "/v1/memories", types.MemoryPage, params=params)

    @staticmethod
    def forget(scope: str, scope_id: str) -> _Call[types.Forgotten]:
        return _Call("DELETE", f"/v1/scopes/{scope}/{scope_id}", types.Forgotten)

    @staticmethod
    def tools() -> _Call[types.ToolsOut]:
        return _Call("GET", "/v1/tools", types.ToolsOut)

    @staticmethod
    def call_tool(name: str, arguments: dict[str, Any]) -> _Call[types.ToolResult]:
        return _Call("POST", f"/v1/tools/{name}", types.ToolResult, body=arguments)

    @staticmethod
    def proposals(status: str, kind: str | None) -> _Call[types.ProposalsOut]:
        params = {"status": status, "kind": kind}
        return _Call("GET", "/v1/proposals", types.ProposalsOut, params=params)

    @staticmethod
    def decide(proposal_id: str, act: str) -> _Call[types.DecisionOut]:
        if act not in ("accept", "reject", "undo"):
            raise ValueError(f"act must be accept, reject or undo; got {act!r}")
        return _Call("POST", f"/v1/proposals/{proposal_id}/{act}", types.DecisionOut)

    @staticmethod
    def tokens() -> _Call[types.TokensOut]:
        return _Call("GET", "/v1/tokens", types.TokensOut)

    @staticmethod
    def create_token(
        name: str, can: Sequence[str], scope_ids: Sequence[str] | None
    ) -> _Call[types.TokenSecretOut]:
        pinned = list(scope_ids) if scope_ids is not None else None
        body = _drop_none(name=name, can=list(can), scope_ids=pinned)
        return _Call("POST", "/v1/tokens", types.TokenSecretOut, body=body)

    @staticmethod
    def revoke_token(name: str) -> _Call[types.TokenOut]:
        return _Call("POST", f"/v1/tokens/{name}/revoke", types.TokenOut)

    @staticmethod
    def reset_token(name: str) -> _Call[types.TokenSecretOut]:
        return _Call("POST", f"/v1/tokens/{name}/reset", types.TokenSecretOut)

    @staticmethod
    def ready() -> _Call[types.ReadyOut]:
        return _Call("GET", "/readyz", types.ReadyOut, accept=frozenset({200, 503}))


def _identity_headers(token: str | None, scope_ids: dict[str, str | None]) -> dict[str, str]:
    headers = {SCOPE_HEADERS[k]: v for k, v in scope_ids.items() if v}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


class _Identity:
    """What both clients share: the identity and the scope id a write goes to."""

    def __init__(
        self,
        token: str | None,
        user: str | None,
        thread: str | None,
        persona: str | None,
        organization: str | None,
    ) -> None:
        self.scope_ids = {"user": user, "thread": thread, "persona": persona}
        self.scope_ids["organization"] = organization
        self.headers = _identity_headers(token, self.scope_ids)

    def scope_id(self, scope: str, scope_id: str | None) -> str:
        """The scope id a turn goes to: the one given, else this client's for the scope."""
        chosen = scope_id or self.scope_ids.get(scope)
        if not chosen:
            raise ValueError(f"a {scope} turn needs a scope_id (or a client made with {scope}=)")
        return chosen


class Client(_Identity):
    """The API over HTTP, for one identity.  Use as a context manager, or ``close()``."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        user: str | None = None,
        thread: str | None = None,
        persona: str | None = None,
        organization: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(token, user, thread, persona, organization)
        self.http = httpx.Client(
            base_url=url, headers=self.headers, timeout=timeout, transport=transport
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def _send(self, call: _Call[T]) -> T:
        return call.answer(self.http.send(call.request(self.http)))

    # -- conversations and memories -----------------------------------------
    def post_turn(
        self,
        user: str | None = None,
        assistant: str | None = None,
        *,
        messages: Sequence[dict[str, Any]] | None = None,
        scope: str = "user",
        scope_id: str | None = None,
        conversation_id: str | None = None,
        timestamp: datetime | float | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> types.TurnAccepted:
        """Post one exchange (``user`` and ``assistant``, or a chat's ``messages``);
        ingested in the background (see :meth:`turn`)."""
        scope_id = self.scope_id(scope, scope_id)
        return self._send(
            _Calls.post_turn(
                user,
                assistant,
                messages,
                scope,
                scope_id,
                conversation_id,
                timestamp,
                metadata,
                idempotency_key,
            )
        )

    def turn(self, turn_id: str) -> types.TurnStatus:
        """A posted turn's ingestion: pending, done or failed."""
        return self._send(_Calls.turn(turn_id))

    def add(
        self,
        content: str,
        *,
        type: str = "episodic",
        scope: str = "user",
        scope_id: str | None = None,
        tags: Sequence[str] = (),
        importance: float = 0.5,
        metadata: dict[str, Any] | None = None,
        timestamp: datetime | float | None = None,
    ) -> types.MemoryAdded:
        """Store one memory; searchable when this returns.  Its ``duplicates`` are the
        memories of the same scope id it repeats (merge instead of keeping both)."""
        return self._send(
            _Calls.add(
                content,
                type=type,
                scope=scope,
                scope_id=scope_id,
                tags=tags,
                importance=importance,
                metadata=metadata,
                timestamp=timestamp,
            )
        )

    def get(self, trace_id: str, *, include_deleted: bool = False) -> types.TraceOut:
        return self._send(_Calls.get(trace_id, include_deleted))

    def update(
        self,
        trace_id: str,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        version: int | None = None,
    ) -> types.TraceOut:
        """New content and/or tags; with ``version``, only if it is still that version."""
        return self._send(_Calls.update(trace_id, content, tags, version))

    def delete(self, trace_id: str) -> types.Deleted:
        return self._send(_Calls.delete(trace_id))

    def undo_supersession(self, trace_id: str) -> types.TraceOut:
        """Make a memory a later one superseded wrongly current again, for good."""
        return self._send(_Calls.undo_supersession(trace_id))

    def merge(self, ids: Sequence[str], *, content: str | None = None) -> types.Merged:
        return self._send(_Calls.merge(ids, content))

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        type: str | None = None,
        scope: str | None = None,
        scope_id: str | None = None,
        tags: Sequence[str] | None = None,
        min_score: float | None = None,
        as_of: datetime | float | None = None,
    ) -> types.SearchOut:
        """Best first; each hit with its dates and relevance."""
        return self._send(
            _Calls.search(
                query,
                limit=limit,
                type=type,
                scope=scope,
                scope_id=scope_id,
                tags=tags,
                min_score=min_score,
                as_of=as_of,
            )
        )

    def memories(
        self,
        *,
        scope: str | None = None,
        scope_id: str | None = None,
        type: str | None = None,
        tags: Sequence[str] | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> types.MemoryPage:
        """One page of memories, newest stored first; pass ``next_cursor`` for the next."""
        return self._send(
            _Calls.memories(
                scope=scope, scope_id=scope_id, type=type, tags=tags, limit=limit, cursor=cursor
            )
        )

    def iter_memories(self, **filters: Any) -> Iterator[types.TraceOut]:
        """Every memory passing ``filters`` (those of :meth:`memories`), page after page."""
        cursor = None
        while True:
            page = self.memories(cursor=cursor, **filters)
            yield from page.memories
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def forget(self, scope: str, scope_id: str) -> types.Forgotten:
        """Everything of one scope id, gone for good (not undoable)."""
        return self._send(_Calls.forget(scope, scope_id))

    # -- tools, proposals, tokens --------------------------------------------
    def tools(self) -> list[types.ToolOut]:
        """The tools' definitions, to hand an LLM as functions."""
        return self._send(_Calls.tools()).tools

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run an LLM's tool call; its result as the tool answers it."""
        return self._send(_Calls.call_tool(name, arguments)).model_dump()

    def proposals(
        self, status: str = "pending", *, kind: str | None = None
    ) -> list[types.ProposalOut]:
        return self._send(_Calls.proposals(status, kind)).proposals

    def decide(self, proposal_id: str, act: str) -> types.DecisionDetail:
        """``act``: accept, reject or undo.  A refused decision raises :class:`Conflict`."""
        return self._send(_Calls.decide(proposal_id, act)).decision

    def tokens(self) -> list[types.TokenOut]:
        return self._send(_Calls.tokens()).tokens

    def create_token(
        self, name: str, can: Sequence[str], *, scope_ids: Sequence[str] | None = None
    ) -> types.TokenSecretOut:
        """A new token; ``.token`` is its secret, shown this once."""
        return self._send(_Calls.create_token(name, can, scope_ids))

    def revoke_token(self, name: str) -> types.TokenOut:
        return self._send(_Calls.revoke_token(name))

    def reset_token(self, name: str) -> types.TokenSecretOut:
        return self._send(_Calls.reset_token(name))

    def ready(self) -> types.ReadyOut:
        """Brain and broker reachable (``status`` says; no error when not)."""
        return self._send(_Calls.ready())


class AsyncClient(_Identity):
    """:class:`Client` for asyncio: the same methods, awaited."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        user: str | None = None,
        thread: str | None = None,
        persona: str | None = None,
        organization: str | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(token, user, thread, persona, organization)
        self.http = httpx.AsyncClient(
            base_url=url, headers=self.headers, timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def _send(self, call: _Call[T]) -> T:
        return call.answer(await self.http.send(call.request(self.http)))

    async def post_turn(
        self,
        user: str | None = None,
        assistant: str | None = None,
        *,
        messages: Sequence[dict[str, Any]] | None = None,
        scope: str = "user",
        scope_id: str | None = None,
        conversation_id: str | None = None,
        timestamp: datetime | float | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> types.TurnAccepted:
        scope_id = self.scope_id(scope, scope_id)
        return await self._send(
            _Calls.post_turn(
                user,
                assistant,
                messages,
                scope,
                scope_id,
                conversation_id,
                timestamp,
                metadata,
                idempotency_key,
            )
        )

    async def turn(self, turn_id: str) -> types.TurnStatus:
        return await self._send(_Calls.turn(turn_id))

    async def add(self, content: str, **fields: Any) -> types.MemoryAdded:
        """As :meth:`Client.add`."""
        return await self._send(_Calls.add(content, **fields))

    async def get(self, trace_id: str, *, include_deleted: bool = False) -> types.TraceOut:
        return await self._send(_Calls.get(trace_id, include_deleted))

    async def update(
        self,
        trace_id: str,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        version: int | None = None,
    ) -> types.TraceOut:
        return await self._send(_Calls.update(trace_id, content, tags, version))

    async def delete(self, trace_id: str) -> types.Deleted:
        return await self._send(_Calls.delete(trace_id))

    async def undo_supersession(self, trace_id: str) -> types.TraceOut:
        return await self._send(_Calls.undo_supersession(trace_id))

    async def merge(self, ids: Sequence[str], *, content: str | None = None) -> types.Merged:
        return await self._send(_Calls.merge(ids, content))

    async def search(self, query: str, **options: Any) -> types.SearchOut:
        """As :meth:`Client.search` (limit, type, scope, scope_id, tags, min_score, as_of)."""
        return await self._send(_Calls.search(query, **{"limit": 10, **options}))

    async def memories(self, **filters: Any) -> types.MemoryPage:
        """As :meth:`Client.memories`."""
        return await self._send(_Calls.memories(**filters))

    async def iter_memories(self, **filters: Any) -> AsyncIterator[types.TraceOut]:
        cursor = None
        while True:
            page = await self.memories(cursor=cursor, **filters)
            for trace in page.memories:
                yield trace
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def forget(self, scope: str, scope_id: str) -> types.Forgotten:
        return await self._send(_Calls.forget(scope, scope_id))

    async def tools(self) -> list[types.ToolOut]:
        return (await self._send(_Calls.tools())).tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return (await self._send(_Calls.call_tool(name, arguments))).model_dump()

    async def proposals(
        self, status: str = "pending", *, kind: str | None = None
    ) -> list[types.ProposalOut]:
        return (await self._send(_Calls.proposals(status, kind))).proposals

    async def decide(self, proposal_id: str, act: str) -> types.DecisionDetail:
        return (await self._send(_Calls.decide(proposal_id, act))).decision

    async def tokens(self) -> list[types.TokenOut]:
        return (await self._send(_Calls.tokens())).tokens

    async def create_token(
        self, name: str, can: Sequence[str], *, scope_ids: Sequence[str] | None = None
    ) -> types.TokenSecretOut:
        return await self._send(_Calls.create_token(name, can, scope_ids))

    async def revoke_token(self, name: str) -> types.TokenOut:
        return await self._send(_Calls.revoke_token(name))

    async def reset_token(self, name: str) -> types.TokenSecretOut:
        return await self._send(_Calls.reset_token(name))

    async def ready(self) -> types.ReadyOut:
        return await self._send(_Calls.ready())
