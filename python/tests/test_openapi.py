"""The client against the server's OpenAPI document (docs/openapi.json): every route is a method of both
clients, and every path/query parameter and body field is known to the client. A route or field the server
gains without the client following fails here."""

import inspect
import json
from pathlib import Path

import pytest

from grove_client import AsyncClient, Client
from grove_client._routes import BROWSER_OPTIONS, CLAW_OPTIONS, ROUTES, SHELL_OPTIONS

DOC = json.loads((Path(__file__).resolve().parents[2] / "docs" / "openapi.json").read_text())
SKIP_TAGS = {"orchard-gui"}  # another protocol (Orchard-GUI's env server), not client methods


def operations():
    for path, item in DOC["paths"].items():
        for method, op in item.items():
            if set(op.get("tags", [])) & SKIP_TAGS:
                continue
            yield path, method.upper(), op


def resolve(schema):
    while "$ref" in schema:
        schema = DOC["components"]["schemas"][schema["$ref"].split("/")[-1]]
    return schema


def properties(schema) -> set[str]:
    schema = resolve(schema)
    props = set(schema.get("properties", {}))
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            props |= properties(sub)
    return props


BY_ID = {r.operation_id: r for r in ROUTES}


def test_every_operation_is_in_the_client_table():
    ops = {op["operationId"]: (path, method) for path, method, op in operations()}
    missing = sorted(set(ops) - set(BY_ID))
    assert not missing, f"routes missing in grove_client/_routes.py: {missing}"
    stale = sorted(set(BY_ID) - set(ops))
    assert not stale, f"grove_client/_routes.py names routes the server does not have: {stale}"
    for oid, (path, method) in ops.items():
        assert (BY_ID[oid].method, BY_ID[oid].path) == (method, path), oid


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.operation_id)
def test_each_route_is_a_method_of_both_clients_with_its_parameters(route):
    path, method = route.path, route.method
    op = DOC["paths"][path][method.lower()]
    for cls in (Client, AsyncClient):
        fn = getattr(cls, route.name, None)
        assert fn is not None, f"{cls.__name__}.{route.name} missing"
        assert inspect.iscoroutinefunction(fn) == (cls is AsyncClient)
        sig = inspect.signature(fn)
        for p in op.get("parameters", []):
            if p["in"] == "path":
                assert p["name"] in sig.parameters, f"{cls.__name__}.{route.name} lacks path parameter {p['name']}"
            if p["in"] == "query":
                assert p["name"] in route.query, f"{route.operation_id}: query parameter {p['name']} unknown to the client"
                assert p["name"] in sig.parameters, f"{cls.__name__}.{route.name} lacks query parameter {p['name']}"


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.operation_id)
def test_body_and_answer_fields_are_known(route):
    op = DOC["paths"][route.path][route.method.lower()]
    body = op.get("requestBody", {}).get("content", {}).get("application/json")
    if body:
        fields = properties(body["schema"])
        missing = sorted(fields - set(route.body))
        assert not missing, f"{route.operation_id}: body fields unknown to the client: {missing}"
        fn = getattr(Client, route.name)
        params = inspect.signature(fn).parameters
        takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
        for f in fields:
            assert f in params or takes_kwargs, f"Client.{route.name} cannot pass body field {f}"
    ok = next((op["responses"][s] for s in ("200", "201") if s in op["responses"]), None)
    content = (ok or {}).get("content", {}).get("application/json")
    if content and route.response:
        fields = properties(content["schema"])
        missing = sorted(fields - set(route.response))
        assert not missing, f"{route.operation_id}: answer fields unknown to the client: {missing}"


def test_creation_options_match_the_sandbox_schemas():
    schema = resolve(DOC["components"]["schemas"]["CreateSandboxBody"])
    variants = [resolve(v) for v in schema.get("oneOf", schema.get("anyOf", []))]
    by_type = {v["properties"]["type"].get("const", (v["properties"]["type"].get("enum") or [None])[0]): set(v["properties"]) for v in variants}
    assert by_type["browser"] == set(BROWSER_OPTIONS), sorted(by_type["browser"] ^ set(BROWSER_OPTIONS))
    assert by_type["shell"] == set(SHELL_OPTIONS), sorted(by_type["shell"] ^ set(SHELL_OPTIONS))
    assert by_type["claw"] == set(CLAW_OPTIONS), sorted(by_type["claw"] ^ set(CLAW_OPTIONS))
    assert set(by_type) == {"browser", "shell", "claw"}, "a new sandbox type: add its options to grove_client/_routes.py"
