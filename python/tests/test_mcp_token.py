"""GET /sandboxes/{id}/mcp/token from both clients against a live server: the address card, the token opening that
sandbox's MCP endpoint (an MCP initialize over Streamable HTTP) and no other, and the refusals with stable codes."""

import asyncio
import json
import urllib.error
import urllib.request

import pytest

from grove_client import AsyncClient, Client, GroveApiError


def mcp_initialize(base_url: str, path: str, token: str) -> tuple[int, dict]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "grove-python-test", "version": "1"}}}
    req = urllib.request.Request(base_url + path, data=json.dumps(body).encode(), method="POST", headers={
        "authorization": f"Bearer {token}", "content-type": "application/json", "accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            status, text, sid = res.status, res.read().decode(), res.headers.get("mcp-session-id")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())
    if sid:  # end the MCP session it opened
        urllib.request.urlopen(urllib.request.Request(base_url + path, method="DELETE", headers={
            "authorization": f"Bearer {token}", "mcp-session-id": sid}), timeout=30).read()
    return status, json.loads(text)


def test_mcp_token_opens_its_sandbox_endpoint_only(client, server):
    with client.sandbox("claw") as a, client.sandbox("claw") as b:
        card = client.mcp_token(a.id)
        assert set(card) == {"sandbox_id", "server", "path", "token", "transport"}
        assert (card["sandbox_id"], card["server"], card["path"], card["transport"]) == (a.id, "grove-claw", f"/sandboxes/{a.id}/mcp", "streamable-http")
        status, answer = mcp_initialize(server.url, card["path"], card["token"])
        assert status == 200 and answer["result"]["serverInfo"]["name"] == "grove-claw"
        status, answer = mcp_initialize(server.url, f"/sandboxes/{b.id}/mcp", card["token"])
        assert (status, answer["error"]["data"]["code"]) == (403, "forbidden")
        # The token is not Grove's key: the token route itself refuses it.
        with Client(server.url, card["token"]) as c, pytest.raises(GroveApiError) as e:
            c.mcp_token(a.id)
        assert (e.value.status, e.value.code) == (403, "forbidden")
        assert asyncio.run(_async_card(server, a.id)) == card


async def _async_card(server, id: str) -> dict:
    async with AsyncClient(server.url, server.api_key) as c:
        return await c.mcp_token(id)


@pytest.mark.parametrize("sandbox_id, status, code", [
    ("no-such-sandbox", 404, "sandbox_not_found"),
    ("x" * 101, 400, "invalid_request"),
    ("../../health", 404, "sandbox_not_found"),
])
def test_mcp_token_refusals(client, sandbox_id, status, code):
    with pytest.raises(GroveApiError) as e:
        client.mcp_token(sandbox_id)
    assert (e.value.status, e.value.code) == (status, code)
    assert "Traceback" not in e.value.message and "node_modules" not in e.value.message
