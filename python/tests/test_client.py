"""The sync client against a live server: routes, typed errors, binary screenshots, context managers."""

import threading
import time
import uuid

import pytest
from grove_server import GroveServer

from grove_client import Client, GroveApiError, RetryPolicy, screenshot_bytes, to_array

CLICK = {"action": "click", "x": 100, "y": 50, "space": "css_px"}


def test_health_and_openapi(client):
    h = client.health()
    assert h["status"] == "ok"
    assert client.openapi()["openapi"].startswith("3.")
    assert "grove_" in client.metrics()


def test_sandbox_lifecycle_step_and_screenshots(client, browser_opts):
    with client.sandbox(**browser_opts) as sb:
        assert sb.info["status"] == "ready"
        r = sb.step(CLICK)
        assert r["done"] is False
        assert r["terminated"] is False and r["truncated"] is False
        assert r["observation"]["title"] == "clicks 1"
        assert r["observation"]["last_action_error"] is None
        b64 = screenshot_bytes(r)
        assert b64[:2] == b"\xff\xd8"  # JPEG
        # binary: the same step answer, the image as raw bytes (multipart on the wire)
        rb = sb.step(CLICK, screenshot="binary")
        assert rb["observation"]["title"] == "clicks 2"
        shot = rb["observation"]["screenshot"]
        assert "base64" not in shot and shot["bytes"][:2] == b"\xff\xd8"
        assert shot["width"] == 640 and shot["height"] == 480
        ob = sb.observation(screenshot="binary")
        assert ob["screenshot"]["bytes"][:2] == b"\xff\xd8"
        assert sb.observation(screenshot="none").get("screenshot") is None
        raw = sb.screenshot()
        assert raw[:2] == b"\xff\xd8"
        sid = sb.id
        assert client.get_sandbox(sid)["steps"] >= 2
    assert client.get_sandbox(sid)["status"] == "closed"


def test_screenshot_as_array(client, site):
    np = pytest.importorskip("numpy")
    opts = {"start_url": site.url + "/", "network": {"allow": [site.host_port]}, "viewport": {"width": 240, "height": 200},
            "screenshot_format": "png"}
    with client.sandbox(**opts) as sb:
        obs = sb.observation(screenshot="binary")
        arr = to_array(obs["screenshot"]["bytes"])
        assert arr.shape == (200, 240, 3) and arr.dtype == np.uint8
        # the button (top-left, 200x100) is drawn in the browser's button grey, the body is white
        assert tuple(arr[150, 230]) == (255, 255, 255)
        assert tuple(arr[50, 100]) != (255, 255, 255)
        assert sb.screenshot_array().shape == (200, 240, 3)
        # the built-in PNG decoder (used when Pillow is missing) agrees with Pillow pixel for pixel
        from grove_client.images import _png_to_array, have_pillow

        own = _png_to_array(obs["screenshot"]["bytes"])
        assert own.shape == (200, 240, 3)
        if have_pillow():
            assert (own == arr).all()


def test_model_output_and_parse_failure(client, browser_opts):
    with client.sandbox(**browser_opts) as sb:
        out = '<tool_call>{"name":"computer_use","arguments":{"action":"left_click","coordinate":[100,50]}}</tool_call>'
        sbx = client.step(sb.id, model_output=out, format="qwen3vl")
        assert sbx["parse"]["ok"] is True
        bad = sb.step(model_output="no tool call here", format="qwen3vl")
        assert bad["parse"]["ok"] is False and bad["actions"] == []


def test_typed_errors(client, browser_opts):
    with pytest.raises(GroveApiError) as e:
        client.get_sandbox("sb_does_not_exist")
    assert (e.value.status, e.value.code) == (404, "sandbox_not_found")
    with client.sandbox(**browser_opts) as sb:
        with pytest.raises(GroveApiError) as e:
            sb.step({"action": "fly"})
        assert (e.value.status, e.value.code) == (400, "invalid_action")
        assert "action" in e.value.message
    with pytest.raises(GroveApiError) as e:
        Client(client.endpoint.base_url, "wrong-key-1234567").list_sandboxes()
    assert (e.value.status, e.value.code) == (403, "forbidden")
    with pytest.raises(TypeError):
        client.create_sandbox(start_urll="http://x/")  # a typo is caught before sending
    with pytest.raises(GroveApiError) as e:
        Client("http://127.0.0.1:9", "k", timeout=2).health()
    assert e.value.status == 0 and e.value.code == "network_error"


def test_labels_filter_and_batch_create(client, browser_opts):
    run = uuid.uuid4().hex[:8]
    infos = client.create_sandboxes(count=3, sandbox={"type": "browser", **browser_opts, "labels": {"run": run, "kind": "a"}})
    assert len({i["sandbox_id"] for i in infos}) == 3
    other = client.create_sandboxes(sandboxes=[{"type": "browser", **browser_opts, "labels": {"run": run, "kind": "b"}}])
    try:
        assert {i["sandbox_id"] for i in client.list_sandboxes(label={"run": run})} == {i["sandbox_id"] for i in infos + other}
        assert [i["sandbox_id"] for i in client.list_sandboxes(label=[f"run={run}", "kind=b"])] == [other[0]["sandbox_id"]]
        assert client.list_sandboxes(label={"run": "nope-" + run}) == []
        with pytest.raises(GroveApiError) as e:
            client.create_sandboxes(count=2)
        assert e.value.code == "invalid_request"
    finally:
        for i in infos + other:
            client.delete_sandbox(i["sandbox_id"])
    assert client.list_sandboxes(label={"run": run}) == []


def test_context_manager_deletes_on_exception_and_keyboard_interrupt(client, browser_opts):
    ids = []
    with pytest.raises(KeyboardInterrupt):
        with client.sandbox(**browser_opts) as sb:
            ids.append(sb.id)
            raise KeyboardInterrupt
    with pytest.raises(ValueError):
        with client.sandbox(**browser_opts) as sb:
            ids.append(sb.id)
            raise ValueError("boom")
    assert [client.get_sandbox(i)["status"] for i in ids] == ["closed", "closed"]


def test_client_close_deletes_what_it_created(server, browser_opts):
    with Client(server.url, server.api_key) as c:
        sid = c.create_sandbox(**browser_opts)["sandbox_id"]
    with Client(server.url, server.api_key) as c:
        assert c.get_sandbox(sid)["status"] == "closed"


def test_heartbeat_thread_keeps_an_idle_sandbox_alive(client, browser_opts):
    with client.sandbox(**browser_opts, idle_timeout_seconds=3, heartbeat_interval=0.3) as kept:
        bare = client.create_sandbox(**browser_opts, idle_timeout_seconds=1)["sandbox_id"]
        client.wait_ready(bare)
        deadline = time.monotonic() + 20
        while client.get_sandbox(bare)["status"] != "closed" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.get_sandbox(bare)["status"] == "closed"  # idle expiry happened...
        assert kept.get()["status"] == "ready"  # ...but not to the one with a heartbeat


def test_capacity_503_is_retried_honouring_retry_after(browser_opts):
    small = GroveServer("--max-sandboxes", "1")
    holder = Client(small.url, small.api_key, retry=RetryPolicy(max_retries=0))
    try:
        first = holder.create_sandbox(**browser_opts)["sandbox_id"]
        with pytest.raises(GroveApiError) as e:
            holder.create_sandbox(**browser_opts)
        assert (e.value.status, e.value.code) == (503, "capacity_exhausted")
        assert e.value.retry_after is not None and e.value.retry_after >= 1
        with Client(small.url, small.api_key, retry=RetryPolicy(max_retries=100, max_delay=0.3)) as c:
            # the slot frees a little later (deleting takes seconds on a loaded machine: up to ~30 s of retries)
            timer = threading.Timer(1.0, lambda: holder.delete_sandbox(first))
            timer.start()
            second = c.create_sandbox(**browser_opts)["sandbox_id"]
            timer.join()
            assert second != first
            assert holder.get_sandbox(first)["status"] == "closed"
    finally:
        holder.close()
        small.stop()


def test_keep_alive_reuses_one_connection(client):
    client.health()
    conn = client._t._local.conn
    sock = conn.sock
    for _ in range(5):
        client.health()
    assert client._t._local.conn is conn and conn.sock is sock


def test_shell_sandbox_routes(client):
    try:
        sb = client.sandbox("shell")
        sb.open()
    except GroveApiError as e:
        if e.code == "unsupported_sandbox_type":
            pytest.skip("this server has no shell environment (needs root and bubblewrap)")
        raise
    try:
        r = client.exec(sb.id, "echo hello; echo err >&2; exit 3")
        assert (r["exit_code"], r["stdout"].strip(), r["stderr"].strip()) == (3, "hello", "err")
        x = client.execute(sb.id, "echo mini")
        assert (x["returncode"], x["output"].strip()) == (0, "mini")
        client.upload_file(sb.id, "data/a.bin", b"\x00\x01grove")
        client.upload_file(sb.id, "notes.txt", "text ✓")
        assert client.download_file(sb.id, "data/a.bin") == b"\x00\x01grove"
        assert client.download_file(sb.id, "notes.txt").decode() == "text ✓"
        names = [f["name"] for f in client.list_files(sb.id, ".")["files"]]
        assert "notes.txt" in names and "data" in names
        with pytest.raises(GroveApiError) as e:
            client.download_file(sb.id, "../../etc/passwd")
        assert e.value.status in (400, 404)
    finally:
        sb.close()


def test_claw_sandbox_routes(client):
    with client.sandbox("claw") as sb:
        tools = client.claw_tools(sb.id)
        assert tools and all(t["function"]["name"] for t in tools)
        assert isinstance(client.claw_state(sb.id), dict)
        ok = client.claw_call(sb.id, "mail_list_folders", {})
        assert ok["status"] == 200 and "folders" in ok["result"]
        bad = client.claw_call(sb.id, "no_such_tool", {})
        assert bad["status"] == 404 and bad["error"]["code"] == "unknown_tool"  # a tool error is an answer, not an HTTP error
        assert isinstance(client.claw_audit(sb.id), list)
        assert client.claw_reset(sb.id)["ok"] is True


def test_reset_sandbox_starts_a_new_episode(client):
    task = {"suite": "offline", "id": "Recipes--0"}
    with client.sandbox(task=task, episode={"max_steps": 2}) as sb:
        wait = {"action": "wait", "ms": 1}
        assert sb.step(wait, screenshot="none")["truncated"] is False
        assert sb.step(wait, screenshot="none")["truncated"] is True
        info = client.reset_sandbox(sb.id)
        assert info["steps"] == 0
        assert sb.step(wait, screenshot="none")["truncated"] is False
        assert sb.evaluate()["steps"] == 1


def test_tasks_of_a_suite(client):
    """GET /tasks?suite=: the ids a BrowserEnv can start, without the answers the judge reads."""
    tasks = client.tasks("offline")
    by_id = {t["id"]: t for t in tasks}
    assert "Recipes--0" in by_id and by_id["Recipes--0"]["suite"] == "offline"
    assert "Lemon Garlic Roast Chicken" in by_id["Recipes--0"]["question"]
    assert all(set(t) <= {"id", "suite", "site", "question", "level", "start_url"} for t in tasks)
    with pytest.raises(GroveApiError) as e:
        client.tasks("nope")
    assert (e.value.status, e.value.code) == (404, "task_not_found") and "known: offline" in e.value.message


def test_creation_error_statuses_follow_the_servers_catalog():
    """A creation failure reported in the sandbox info gets the HTTP status protocol/errors.ts gives its code:
    browser_start_timeout is a 503 to retry (it was status 0)."""
    import re
    from pathlib import Path

    from grove_client.errors import CREATION_ERROR_STATUS, SandboxFailedError

    catalog = Path(__file__).resolve().parents[2].joinpath("protocol", "errors.ts").read_text()
    statuses = dict((m[0], int(m[1])) for m in re.findall(r"^\s+(\w+): \{ status: (\d+),", catalog, re.M))
    for code, status in CREATION_ERROR_STATUS.items():
        assert statuses[code] == status, code
    e = SandboxFailedError.of({"code": "browser_start_timeout", "message": "context creation ran out of time"})
    assert (e.status, e.code, e.retryable) == (503, "browser_start_timeout", True)
    assert isinstance(e, GroveApiError) and "503" in str(e)
    assert not SandboxFailedError.of({"code": "start_url_failed", "message": "x"}).retryable
    import pickle

    assert pickle.loads(pickle.dumps(e)).status == 503
