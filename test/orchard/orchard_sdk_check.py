"""Calls every route of Orchard Env's API the way its Python SDK (microsoft/Orchard,
orchard_env/client/sandbox_client.py and client/process.py) does -- same methods, paths, JSON bodies, query
parameters, X-API-Key header, ?api_key= on the PTY WebSocket, Retry-After handling -- against a live Grove
server. Standard library only (our own code, not the SDK's). Prints "ok <check>" per check; exits 1 on the first
failure.

    python3 orchard_sdk_check.py BASE_URL API_KEY CAPACITY
"""

import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

BASE, KEY, CAPACITY = sys.argv[1].rstrip("/"), sys.argv[2], int(sys.argv[3])


class HttpError(Exception):
    def __init__(self, status, body, headers):
        super().__init__(f"HTTP {status}: {body}")
        self.status, self.body, self.headers = status, body, headers


def request(method, path, body=None, params=None, key=KEY, retries=3):
    """One SDK-style call: JSON in, JSON out, X-API-Key, up to 3 tries on 503 honouring Retry-After."""
    url = BASE + path + ("?" + urllib.parse.urlencode(params) if params else "")
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if key:
        headers["X-API-Key"] = key
    for attempt in range(retries):
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=120) as res:
                return json.loads(res.read() or b"null")
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            if e.code == 503 and attempt < retries - 1:
                time.sleep(float(e.headers.get("Retry-After", "5")))
                continue
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = text
            raise HttpError(e.code, parsed, e.headers) from None


def expect_error(status, fn):
    try:
        fn()
    except HttpError as e:
        check(e.status == status, f"expected HTTP {status}, got {e.status}: {e.body}")
        check(isinstance(e.body, dict) and "detail" in e.body, f"FastAPI-style detail missing: {e.body}")
        return e
    raise AssertionError(f"expected HTTP {status}, the call succeeded")


def check(cond, message):
    if not cond:
        raise AssertionError(message)


def ok(name):
    print("ok", name, flush=True)


def create(sandbox_id=None, **extra):
    body = {"image": "python:3.11-slim", "block_network": True, **extra}
    if sandbox_id:
        body["sandbox_id"] = sandbox_id
    return request("POST", "/sandboxes", body)


def exec_wait(sid, command, timeout=None, cwd=None, env=None, login_shell=False):
    return request("POST", f"/sandboxes/{sid}/exec", {
        "command": command, "timeout_seconds": timeout, "cwd": cwd, "env": env, "login_shell": login_shell, "wait": True,
    })


# --- a minimal WebSocket client (RFC 6455), enough for the PTY protocol -------------------------------------

class WebSocket:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        path = u.path + ("?" + u.query if u.query else "")
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {u.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                break
            head += chunk
        self.status = int(head.split(b" ", 2)[1])
        self.buf = b""

    def send(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        n = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536
                                  else bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("socket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._read(8))[0]
        payload = self._read(n)
        if b0 & 0x0F == 0x8:
            return None
        return payload.decode()


def main():
    # --- service routes
    root = request("GET", "/", key=None)
    check(root.get("status") == "running", root)
    check(request("GET", "/health", key=None) == {"status": "healthy"}, "health")
    ok("GET / and /health without a key")
    res = request("GET", "/resources")
    check(res["status"] == "ok" and "cpu" in res and "memory" in res, res)
    ok("GET /resources")
    expect_error(401, lambda: request("GET", "/resources", key=None))
    expect_error(403, lambda: request("GET", "/resources", key="wrong-key-123"))
    ok("401 / 403 with detail")

    # --- create (custom id, cpu/memory quantities, timeout) and server-side wait
    sid = f"sdk-{os.getpid()}"
    created = create(sid, cpu="1", memory="512Mi", timeout=60)
    check(created["sandbox_id"] == sid, created)
    check(created["status"] in ("pending", "ready") and created["timeout"] == 60 and created["cpu"] == "1", created)
    waited = request("GET", f"/sandboxes/{sid}/wait", params={"timeout": created["timeout"]})
    check(waited.get("ready") is True and waited["status"] == "ready", waited)
    ok("POST /sandboxes + GET /wait")
    expect_error(409, lambda: create(sid))
    ok("duplicate sandbox_id refused")
    info = request("GET", f"/sandboxes/{sid}")
    for field in ("sandbox_id", "namespace", "image", "block_network", "cpu", "memory", "created_at", "ready", "status", "status_message"):
        check(field in info, f"GET /sandboxes/id lacks {field}: {info}")
    check(info["image"] == "python:3.11-slim" and info["block_network"] is True, info)
    check("host's root file system" in info["status_message"], info)
    ok("GET /sandboxes/{id}")
    check(request("POST", f"/sandboxes/{sid}/heartbeat") == {"status": "ok", "sandbox_id": sid}, "heartbeat")
    ok("POST heartbeat")

    # --- exec with wait, as SandboxInstance.exec sends it
    r = exec_wait(sid, "echo hello; echo err >&2; echo $FOO; pwd", timeout=30, cwd="/tmp", env={"FOO": "bar"})
    check(r["status"] == "succeeded" and r["exit_code"] == 0, r)
    check(r["stdout"] == "hello\nbar\n/tmp\n" and r["stderr"] == "err\n", r)
    for field in ("job_id", "sandbox_id", "command", "created_at", "started_at", "completed_at", "error"):
        check(field in r, f"job lacks {field}")
    ok("exec wait=True")
    # A list is joined with spaces and run by the shell, as Orchard's orchestrator and agent do.
    r = exec_wait(sid, ["echo", "$HOME;", "exit", "3"])
    check(r["status"] == "failed" and r["exit_code"] == 3 and r["stdout"] == "/workspace\n", r)
    ok("exec list command (joined, run by the shell), failed status")
    r = exec_wait(sid, "sleep 30 & sleep 31", timeout=1)
    check(r["status"] == "failed" and r["exit_code"] == 124 and r["error"], r)
    ok("exec timeout: 124")
    r = exec_wait(sid, "echo $0", login_shell=True)
    check(r["status"] == "succeeded", r)
    ok("exec login_shell")

    # --- jobs: submit without wait, poll, server-side wait
    sub = request("POST", f"/sandboxes/{sid}/exec", {"command": "sleep 1; echo later", "timeout_seconds": 30, "cwd": None, "env": None, "login_shell": False})
    check(sub["status"] == "queued" and sub["job_id"], sub)
    polled = request("GET", f"/jobs/{sub['job_id']}")
    check(polled["status"] in ("queued", "running", "succeeded"), polled)
    done = request("GET", f"/jobs/{sub['job_id']}/wait", params={"timeout": 30})
    check(done["status"] == "succeeded" and done["stdout"] == "later\n", done)
    ok("jobs: submit, GET /jobs/{id}, GET /jobs/{id}/wait")
    expect_error(404, lambda: request("GET", "/jobs/no-such-job"))
    ok("unknown job 404")

    # --- files
    content = bytes(range(256)) * 4
    up = request("POST", f"/sandboxes/{sid}/files", {"path": "/workspace/pkg/data.bin", "content": base64.b64encode(content).decode()})
    check(up == {"success": True, "path": "/workspace/pkg/data.bin", "size": 1024}, up)
    down = request("GET", f"/sandboxes/{sid}/files", params={"path": "/workspace/pkg/data.bin"})
    check(base64.b64decode(down["content"]) == content and down["size"] == 1024, "download")
    listing = request("GET", f"/sandboxes/{sid}/files/list", params={"path": "/workspace"})
    entry = [f for f in listing["files"] if f["name"] == "pkg"]
    check(entry and entry[0]["type"] == "directory" and isinstance(entry[0]["size"], int) and entry[0]["modified"], listing)
    ok("files upload / download / list")
    expect_error(400, lambda: request("GET", f"/sandboxes/{sid}/files", params={"path": "/etc/passwd"}))
    expect_error(400, lambda: request("POST", f"/sandboxes/{sid}/files", {"path": "/workspace/../etc/x", "content": "eA=="}))
    expect_error(404, lambda: request("GET", f"/sandboxes/{sid}/files", params={"path": "/workspace/missing"}))
    ok("path escapes 400, missing 404")

    # --- apply_patch (the default directory is the workspace)
    request("POST", f"/sandboxes/{sid}/files", {"path": "/workspace/hello.txt", "content": base64.b64encode(b"hello\n").decode()})
    patch = "--- a/hello.txt\n+++ b/hello.txt\n@@ -1 +1 @@\n-hello\n+goodbye 'quoted' $(echo no)\n"
    p = request("POST", f"/sandboxes/{sid}/apply_patch", {"patch": patch, "timeout_seconds": 30})
    check(p["success"] is True and p["exit_code"] == 0, p)
    check(exec_wait(sid, "cat hello.txt")["stdout"] == "goodbye 'quoted' $(echo no)\n", "patched content")
    p = request("POST", f"/sandboxes/{sid}/apply_patch", {"patch": patch, "timeout_seconds": 30})
    check(p["success"] is False and p["error"], p)
    ok("apply_patch")

    # --- PTY over WebSocket, key in the query as the SDK sends it
    ws_base = BASE.replace("http://", "ws://")
    ws = WebSocket(f"{ws_base}/sandboxes/{sid}/exec/pty?api_key={KEY}")
    check(ws.status == 101, f"upgrade status {ws.status}")
    ws.send(json.dumps({"type": "init", "cmd": ["bash", "-c", "read line; echo got:$line; tty; exit 7"], "env": {}, "cwd": None,
                        "rows": 24, "cols": 80, "login_shell": False}))
    out, code = "", None
    while True:
        msg = ws.recv()
        if msg is None:
            break
        frame = json.loads(msg)
        if frame["type"] == "ready":
            ws.send(json.dumps({"type": "resize", "rows": 40, "cols": 120}))
            ws.send(json.dumps({"type": "stdin", "data": base64.b64encode(b"typed\n").decode()}))
        elif frame["type"] == "stdout":
            out += base64.b64decode(frame["data"]).decode(errors="replace")
        elif frame["type"] == "exit":
            code = frame["code"]
            break
        elif frame["type"] == "error":
            raise AssertionError(frame)
    check(code == 7 and "got:typed" in out and "/dev/pts/" in out, (code, out))
    ok("PTY WebSocket with ?api_key=")
    bad = WebSocket(f"{ws_base}/sandboxes/{sid}/exec/pty?api_key=wrong")
    check(bad.status == 403, f"bad key upgrade status {bad.status}")
    ok("PTY refuses a wrong key")

    # --- errors in FastAPI's shape
    expect_error(404, lambda: request("GET", "/sandboxes/no-such-sandbox"))
    e = expect_error(422, lambda: request("POST", "/sandboxes", {"block_network": True}))
    check(isinstance(e.body["detail"], list) and e.body["detail"][0]["loc"] == ["body", "image"], e.body)
    ok("404 and 422 detail")

    # --- 408 from a server-side wait that runs out (a sandbox still starting, timeout=0)
    got_408 = False
    for i in range(5):
        tmp = create(f"{sid}-w{i}")
        try:
            request("GET", f"/sandboxes/{tmp['sandbox_id']}/wait", params={"timeout": 0})
        except HttpError as err:
            check(err.status == 408 and "detail" in err.body, err.body)
            got_408 = True
        request("DELETE", f"/sandboxes/{tmp['sandbox_id']}")
        if got_408:
            break
    check(got_408, "no 408 from /wait?timeout=0")
    ok("wait 408")

    # --- capacity: 503 with a short Retry-After (the SDK sleeps it between tries)
    extra = []
    try:
        for i in range(CAPACITY):
            extra.append(create(f"{sid}-c{i}")["sandbox_id"])
        raise AssertionError("no 503 past the capacity")
    except HttpError as err:
        check(err.status == 503, err.body)
        retry_after = float(err.headers.get("Retry-After"))
        check(1 <= retry_after <= 5, f"Retry-After {retry_after}")
        check("detail" in err.body, err.body)
    finally:
        for x in extra:
            request("DELETE", f"/sandboxes/{x}")
    ok("503 with Retry-After <= 5")

    # --- delete answers 200 with JSON; the sandbox is gone
    check(request("DELETE", f"/sandboxes/{sid}") == {"status": "deleted", "sandbox_id": sid}, "delete")
    expect_error(404, lambda: request("GET", f"/sandboxes/{sid}"))
    ok("DELETE 200 JSON, then 404")
    print("all checks passed", flush=True)


if __name__ == "__main__":
    try:
        main()
    except (AssertionError, HttpError) as failure:
        print("FAILED:", failure, flush=True)
        sys.exit(1)
