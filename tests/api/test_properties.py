"""No input makes the API answer 5xx: random bodies and queries against every
operation of the OpenAPI spec, with hypothesis."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def body_for(schema_fields: list[str]) -> st.SearchStrategy[Any]:
    """Objects using the operation's own field names (and others), with any values."""
    keys = st.sampled_from(schema_fields) if schema_fields else st.text(max_size=8)
    return json_values | st.dictionaries(keys | st.text(max_size=8), json_values, max_size=8)


def operations(client: TestClient) -> list[tuple[str, str, list[str], list[str]]]:
    spec = client.get("/openapi.json").json()
    components = spec.get("components", {}).get("schemas", {})
    ops = []
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            fields: list[str] = []
            ref = (
                op.get("requestBody", {})
                .get("content", {})
                .get("application/json", {})
                .get("schema", {})
                .get("$ref")
            )
            if ref:
                fields = list(components[ref.split("/")[-1]].get("properties", {}))
            params = [p["name"] for p in op.get("parameters", []) if p["in"] == "query"]
            ops.append((method, path, fields, params))
    return ops


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_no_input_gets_a_5xx(client: TestClient, data: st.DataObject) -> None:
    ops = operations(client)
    method, path, fields, params = data.draw(st.sampled_from(ops))
    path = path.replace(
        "{trace_id}", data.draw(st.sampled_from(["mt_x", "x", "%20", "mt_" + "a" * 300]))
    )
    path = path.replace("{turn_id}", data.draw(st.sampled_from(["turn_x", "nope"])))
    path = path.replace("{name}", data.draw(st.sampled_from(["memory_add", "memory_search", "zz"])))
    query = data.draw(
        st.dictionaries(st.sampled_from(params or ["q"]), st.text(max_size=20), max_size=4)
    )
    kwargs: dict[str, Any] = {"params": query}
    if method in ("post", "patch", "put"):
        if data.draw(st.booleans()):
            kwargs["json"] = data.draw(body_for(fields))
        else:
            kwargs["content"] = data.draw(st.binary(max_size=64))
            kwargs["headers"] = {"content-type": "application/json"}
    headers = kwargs.setdefault("headers", {})
    if data.draw(st.booleans()):
        headers["If-Match"] = data.draw(st.text(alphabet='0123456789"x-', max_size=5))
    r = client.request(method.upper(), path, **kwargs)
    assert r.status_code < 500, (method, path, kwargs, r.status_code, r.text)
