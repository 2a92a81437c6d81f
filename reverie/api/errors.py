"""One table from memory_core's errors to HTTP statuses, and the error body shape.

Every error answers ``{"error": {"code", "message"}}``; a validation error
names the offending field first in its message.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

import memory_core as mc

log = logging.getLogger(__name__)

STATUS: dict[type[mc.ReverieError], int] = {
    mc.Unauthorized: 401,
    mc.Forbidden: 403,
    mc.InvalidIdentity: 400,  # before InvalidArgument, its base
    mc.InvalidArgument: 422,
    mc.NotFound: 404,
    mc.Conflict: 409,
    mc.NotEnabled: 501,
    mc.BrainNotFound: 503,
    mc.BrainError: 503,
    mc.ConfigError: 500,
}
CODE_STATUS = {cls.code: status for cls, status in STATUS.items()}


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def without_paths(message: str, settings: mc.Settings | None, brain: mc.Brain | None) -> str:
    """``message`` with the server's own paths taken out: a file of the data folder
    named from there, the brain by its file name.  memory_core names files so already;
    this keeps an answer from ever showing where the server keeps its data."""
    places: list[tuple[str, str]] = []
    if brain is not None and brain.path is not None:
        places.append((str(brain.path.resolve()), brain.path.name))
        places.append((str(brain.path), brain.path.name))
    if settings is not None:
        for folder in (settings.data_dir, settings.home):
            for spelled in {str(folder.resolve()), str(folder)}:
                if spelled not in ("", "."):
                    places.append((spelled.rstrip("/") + "/", ""))
    for place, shown in sorted(places, key=lambda p: -len(p[0])):
        message = message.replace(place, shown)
    return message


def status_for(error: mc.ReverieError) -> int:
    return next((s for cls, s in STATUS.items() if isinstance(error, cls)), 500)


def _field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


def install(app: FastAPI) -> None:
    @app.exception_handler(mc.ReverieError)
    async def _reverie(request: Request, exc: mc.ReverieError) -> JSONResponse:
        status = status_for(exc)
        if status >= 500:
            log.error("request failed: %s", exc)
        headers = {"WWW-Authenticate": 'Bearer realm="reverie"'} if status == 401 else None
        state = request.app.state
        message = without_paths(
            str(exc), getattr(state, "settings", None), getattr(state, "brain", None)
        )
        return JSONResponse(error_body(exc.code, message), status_code=status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        field = _field(tuple(first.get("loc", ())))
        if first.get("type") == "json_invalid":
            message = f"body: malformed JSON ({first.get('msg')})"
        else:
            message = f"{field}: {first.get('msg')}"
        return JSONResponse(error_body("invalid_argument", message), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}.get(
            exc.status_code, "http_error"
        )
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(allowed_methods(request.app, request.scope))
        return JSONResponse(
            error_body(code, str(exc.detail)), status_code=exc.status_code, headers=headers
        )


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(app: FastAPI, scope: Any) -> list[str]:
    """The methods the API answers on this request's path (the Allow header).

    Read from the OpenAPI document, whose paths name every route's methods (a path
    spelled out, /v1/memories/merge, is its own and not also an instance of
    /v1/memories/{trace_id}); a path it leaves out (the docs pages) asks the routes.
    """
    path = scope.get("path", "")
    documented = app.openapi().get("paths", {})
    candidates = [t for t in documented if _template(t).fullmatch(path)]
    literal = [t for t in candidates if "{" not in t]
    if candidates:
        methods = {m.upper() for t in literal or candidates for m in documented[t]}
        return [m for m in _METHODS if m in methods]
    return [
        method
        for method in _METHODS
        if any(r.matches({**scope, "method": method})[0] == Match.FULL for r in app.router.routes)
    ]


def _template(path: str) -> re.Pattern[str]:
    return re.compile(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path)))
