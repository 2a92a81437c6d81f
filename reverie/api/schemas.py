"""The statuses each route may answer besides its success, in the OpenAPI document.

The responses themselves are typed by :mod:`reverie.types`, shared with the client.
"""

from __future__ import annotations

from typing import Any

from reverie.types import ErrorOut


def refusals(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route's own refusals, each with the error body."""
    return {s: {"model": ErrorOut, "description": DESCRIPTIONS[s]} for s in statuses}


DESCRIPTIONS = {
    400: "The request could not be read: its body, or a header naming the caller that is "
    "blank, repeated or not UTF-8.",
    401: "A token is required, or this one is not valid.",
    403: "The caller may not do this (capability, scope id or a foreign web origin).",
    404: "Not found, or not the caller's.",
    405: "Method not allowed on this path.",
    409: "Conflict: the thing changed or is in another state; nothing was changed.",
    413: "The body is too large.",
    421: "The Host header does not name this API (only loopback names on an open API).",
    422: "A field or parameter is invalid; the message names it.",
    501: "Not enabled on this server.",
    503: "The brain is unusable right now.",
}

# Answered without a token: only the site guard may refuse them.
OPEN_PATHS = frozenset({"/healthz", "/readyz"})
# Every route answers these: the site guard (400, 421, 403), tokens (401), the brain (503).
EVERY_ROUTE = (400, 401, 403, 421, 503)
# A route with a body or parameters also answers these.
WITH_BODY = (413, 422)
WITH_PARAMETERS = (422,)


def document_refusals(openapi: dict[str, Any]) -> None:
    """Add to every operation of ``openapi`` the refusals every route may answer, and
    make each 422 the error body the API really sends (not FastAPI's default)."""
    schemas = openapi.setdefault("components", {}).setdefault("schemas", {})
    error_schema = ErrorOut.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(error_schema.pop("$defs", {}))
    schemas["ErrorOut"] = error_schema
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
    for path, operations in openapi.get("paths", {}).items():
        for operation in operations.values():
            statuses = list(EVERY_ROUTE if path not in OPEN_PATHS else (400, 403, 421))
            if "requestBody" in operation:
                statuses += WITH_BODY
            if operation.get("parameters"):
                statuses += WITH_PARAMETERS
            for parameter in operation.get("parameters", []):
                _absent_not_null(parameter)
            responses = operation.setdefault("responses", {})
            for status in statuses:
                responses.setdefault(str(status), {"description": DESCRIPTIONS[status]})
            for status, response in responses.items():
                if int(status) >= 400 and ("content" not in response or status == "422"):
                    response["content"] = error


def _absent_not_null(parameter: dict[str, Any]) -> None:
    """An optional query or header parameter is given or left out, never ``null``: its
    schema is the given value's alone (FastAPI writes ``anyOf [X, null]``)."""
    schema = parameter.get("schema", {})
    kept = [s for s in schema.get("anyOf", []) if s != {"type": "null"}]
    if not parameter.get("required") and len(kept) < len(schema.get("anyOf", [])):
        others = {k: v for k, v in schema.items() if k != "anyOf"}
        parameter["schema"] = {**kept[0], **others} if len(kept) == 1 else {"anyOf": kept, **others}
