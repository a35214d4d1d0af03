"""OpenEnv's own Python clients, unchanged, against a live `grove serve`.

Run with OpenEnv's checkout on PYTHONPATH (its src/) and its client dependencies installed (pydantic, websockets,
httpx, fastapi, fastmcp: openenv.core imports its server package too). Arguments: BASE_URL KEY. The server must run
with GROVE_OPENENV_MAX_SESSIONS=4 and GROVE_OPENENV_IDLE_TIMEOUT_S=3 (capacity and idle expiry are checked).
Prints one line per check and `N passed, N failed` at the end; exits non-zero on a failure.
"""

import asyncio
import json
import os
import sys
import time
import traceback

from openenv.core.generic_client import GenericEnvClient
from openenv.core.mcp_client import MCPToolClient
from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction, CallToolObservation, ListToolsObservation
from openenv.core.env_server.mcp_types import JsonRpcErrorCode, JsonRpcRequest, JsonRpcResponse
import websockets

BASE, KEY = sys.argv[1], sys.argv[2]
CHECKS = [a for a in sys.argv[3:]] or ["browser", "shell", "claw", "swe", "mcp", "wsmcp", "concurrent", "capacity", "idle", "wrongkey"]


def url(env, key=KEY):
    return f"{BASE}/openenv/{key}/{env}"


async def browser():
    async with GenericEnvClient(base_url=url("browser")) as env:
        r = await env.reset(task="offline/Shop--0", episode_id="py-browser")
        obs = r.observation
        assert obs["screenshot"]["base64"] and obs["url"].startswith("http"), obs.keys()
        assert obs["goal"], "task goal"
        r = await env.step({"action": {"action": "scroll", "direction": "down", "amount": 2}})
        assert r.done is False and r.reward is None
        assert r.observation["actions"][0]["error"] is None
        # A policy format's raw text (Qwen3-VL tool call) parsed on the server.
        r = await env.step({"model_output": '<tool_call>\n{"name": "computer_use", "arguments": {"action": "scroll", "coordinate": [500, 500], "pixels": -200}}\n</tool_call>', "format": "qwen3vl"})
        assert r.observation["parse"]["ok"] is True, r.observation.get("parse")
        st = await env.state()
        assert st["episode_id"] == "py-browser" and st["step_count"] == 2, st
        r = await env.step({"action": {"action": "answer", "text": "I could not find it"}})
        assert r.done is True, r
        assert "evaluation" in r.observation, r.observation.keys()
        assert r.reward in (0, 0.0, 1, 1.0), r.reward
        return f"reset/step/model_output/state; terminal reward {r.reward} ({r.observation['evaluation']['verdict']['outcome']})"


async def shell():
    async with GenericEnvClient(base_url=url("shell")) as env:
        await env.reset()
        r = await env.step({"command": "echo hello from $(whoami) && id -u"})
        assert r.observation["exit_code"] == 0 and r.observation["stdout"].startswith("hello"), r.observation
        r = await env.step({"command": ["sh", "-c", "exit 3"]})
        assert r.observation["exit_code"] == 3
        return f"exec: {r.observation['exit_code']=}, step_count {(await env.state())['step_count']}"


async def claw():
    # A reset that starts a worker pod (the kubernetes backend) can take longer than the client's default 60 s on a
    # loaded machine, as the SWE check's does: the client's own knob, message_timeout_s.
    async with GenericEnvClient(base_url=url("claw"), message_timeout_s=300) as env:
        r = await env.reset(task="hand-triage-urgent")
        assert r.observation["goal"]
        r = await env.step({"tool": "mail_list_messages", "arguments": {}})
        assert r.observation["status"] == 200, r.observation
        r = await env.step({"answer": "Handle the first urgent mail first."})
        assert r.done is True and isinstance(r.reward, (int, float)), r
        return f"tool call + graded answer, reward {r.reward}"


async def swe():
    async with GenericEnvClient(base_url=url("swe"), message_timeout_s=300) as env:
        r = await env.reset(task="grove__textkit-2")
        assert "seconds" in r.observation["problem_statement"].lower() or r.observation["problem_statement"], r.observation
        r = await env.step({"command": "git status --short && ls"})
        assert r.observation["exit_code"] == 0, r.observation
        r = await env.step({"submit": True})
        assert r.done is True and r.reward == 0, r
        empty = r.observation["evaluation"].get("error")
        # The instance's gold patch, written into the repository by commands, submitted as the repository's diff.
        insts = json.load(open(os.path.join(os.path.dirname(__file__), "../../swe-env/fixtures/textkit/instances.json")))
        gold = next(i for i in insts if i["instance_id"] == "grove__textkit-2")["patch"]
        await env.reset(task="grove__textkit-2")
        r = await env.step({"command": ["git", "apply", "-"], "stdin": gold})
        assert r.observation["exit_code"] == 0, r.observation
        r = await env.step({"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"})
        assert r.done is True and r.reward == 1, r.observation.get("evaluation")
        return f"empty submission reward 0 ({empty}); gold patch applied and submitted: reward {r.reward} ({r.observation['evaluation']['resolution']})"


async def mcp():
    # OpenEnv's MCP client: list_tools / call_tool as step actions over /ws.
    async with MCPToolClient(base_url=url("claw")) as env:
        await env.reset(seed=2)
        tools = await env.list_tools()
        names = [t.name for t in tools]
        assert "todo_list" in names, names
        data = await env.call_tool("todo_list")
        res = await env.step(CallToolAction(tool_name="todo_create", arguments={"title": "from OpenEnv"}))
        assert isinstance(res.observation, CallToolObservation) and res.observation.error is None, res.observation
    # Production mode: JSON-RPC on HTTP /mcp with OpenEnv's session methods.
    client = MCPToolClient(base_url=url("shell"))
    client.use_production_mode = True
    try:
        tools = await client.list_tools()
        assert "exec" in [t.name for t in tools], tools
        out = await client.call_tool("exec", command="echo rpc")
        assert "rpc" in str(out), out
    finally:
        await client.close()
    return f"{len(names)} claw tools over /ws, todo_list -> {type(data).__name__}; shell exec over /mcp: ok"


async def wsmcp():
    # OpenEnv's WebSocket /mcp route (no client class of OpenEnv's speaks it): frames built and read with OpenEnv's
    # own JSON-RPC models (mcp_types.py); one session and sandbox for the connection.
    async with websockets.connect(url("shell").replace("http", "ws", 1) + "/mcp") as ws:
        async def call(method, params=None, id=1):
            await ws.send(JsonRpcRequest(jsonrpc="2.0", method=method, params=params or {}, id=id).model_dump_json())
            return JsonRpcResponse.model_validate_json(await ws.recv())

        tools = await call("tools/list")
        assert tools.error is None and "exec" in [t["name"] for t in tools.result["tools"]], tools
        made = await call("tools/call", {"name": "exec", "arguments": {"command": "echo ws-mcp > marker.txt"}}, 2)
        assert made.error is None and made.id == 2, made
        read = await call("tools/call", {"name": "exec", "arguments": {"command": "cat marker.txt"}}, 3)
        assert "ws-mcp" in json.dumps(read.result), read  # the same sandbox across calls
        own = await call("openenv/session/create", {}, 4)
        closing = await call("openenv/session/close", {"session_id": own.result["session_id"]}, 5)
        assert closing.error.code == JsonRpcErrorCode.INVALID_REQUEST, closing
        await ws.send("{")
        bad = JsonRpcResponse.model_validate_json(await ws.recv())
        assert bad.error.code == JsonRpcErrorCode.PARSE_ERROR and bad.id is None, bad
    return f"{len(tools.result['tools'])} shell tools over ws /mcp; state kept across calls; parse error {bad.error.code}"


async def concurrent():
    async def one(i):
        async with GenericEnvClient(base_url=url("claw")) as env:
            await env.reset(seed=i, episode_id=f"c{i}")
            for _ in range(3):
                await env.step({"tool": "todo_list", "arguments": {}})
            return await env.state()

    states = await asyncio.gather(*[one(i) for i in range(4)])
    assert sorted(s["episode_id"] for s in states) == ["c0", "c1", "c2", "c3"], states
    assert all(s["step_count"] == 3 for s in states), states
    assert len({s["sandbox_id"] for s in states}) == 4
    return "4 sessions at once, each its own sandbox and step count"


async def capacity():
    clients = [GenericEnvClient(base_url=url("claw")) for _ in range(4)]
    try:
        for c in clients:
            # Sessions the checks before closed are freed as the server sees their sockets close: a moment later.
            for attempt in range(50):
                try:
                    await c.reset()
                    break
                except RuntimeError as e:
                    if "CAPACITY_REACHED" not in str(e) or attempt == 49:
                        raise
                    await c.close()
                    await asyncio.sleep(0.2)
        extra = GenericEnvClient(base_url=url("claw"))
        try:
            await extra.reset()
            raise AssertionError("a 5th session was accepted")
        except RuntimeError as e:
            assert "CAPACITY_REACHED" in str(e), e
            msg = str(e)
        finally:
            await extra.close()
    finally:
        for c in clients:
            await c.close()
    return msg[:90]


async def idle():
    async with GenericEnvClient(base_url=url("claw")) as env:
        await env.reset()
        await asyncio.sleep(5)
        try:
            # The server told the idle session it closed; the client reads that error frame as the answer.
            await env.step({"tool": "todo_list", "arguments": {}})
            raise AssertionError("the idle session still answered")
        except RuntimeError as e:
            assert "SESSION_ERROR" in str(e) and "idle" in str(e), e
            return str(e)[:90]


async def wrongkey():
    try:
        async with GenericEnvClient(base_url=url("claw", key="wrong-key-123456")) as env:
            await env.reset()
        raise AssertionError("wrong key accepted")
    except ConnectionError as e:
        assert "403" in str(e), e
        return "wrong key in the base URL: HTTP 403 at the handshake"


async def main():
    passed = failed = 0
    for name in CHECKS:
        t = time.monotonic()
        try:
            what = await globals()[name]()
            passed += 1
            print(f"ok   {name:11s} {time.monotonic() - t:5.1f}s  {what}", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {name:11s} {time.monotonic() - t:5.1f}s", flush=True)
            traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    return failed


if __name__ == "__main__":
    sys.exit(1 if asyncio.run(main()) else 0)
