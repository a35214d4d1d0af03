"""The capture contract seen from the client (503 capture_timeout: never an observation without its screenshot),
against a peer answering the server's wire format for it: a step is raised, never sent again; an observation is
retried; BrowserEnv answers a step from a fresh observation."""

import threading

import pytest

from grove_client import Client

CLICK = {"action": "click", "x": 100, "y": 50, "space": "css_px"}


def test_a_step_whose_capture_timed_out_is_raised_never_sent_again():
    """503 capture_timeout (the contract: never an observation without its screenshot): a step's actions ran, so the
    client raises CaptureTimeoutError with what ran and does not resend it; an observation (a read) is retried.
    Against a peer answering the server's wire format for it."""
    import http.server
    import json as _json

    from grove_client import CaptureTimeoutError

    seen = []
    details = {"executed": True, "actions": [{"action": CLICK, "error": None, "ms": 3}], "done": False, "step": 4, "url": "http://a/"}

    class Peer(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self, status, body):
            data = _json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            if status == 503:
                self.send_header("retry-after", "0")
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length", 0)))
            seen.append(("POST", self.path))
            self.answer(503, {"error": {"code": "capture_timeout", "message": "no capture in time", "details": details}})

        def do_GET(self):  # noqa: N802
            seen.append(("GET", self.path))
            if sum(1 for m, p in seen if p == self.path) == 1:
                self.answer(503, {"error": {"code": "capture_timeout", "message": "no capture in time", "details": {"executed": False}}})
            else:
                self.answer(200, {"step": 4, "url": "http://a/", "title": "", "tabs": [], "screenshot": {"mime": "image/png", "base64": "AAAA"}})

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Peer)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with Client(f"http://127.0.0.1:{srv.server_address[1]}", "k" * 8) as c:
            with pytest.raises(CaptureTimeoutError) as e:
                c.step("sb_x", CLICK)
            assert seen == [("POST", "/sandboxes/sb_x/step")]  # sent once
            assert (e.value.status, e.value.code, e.value.retry_after, e.value.executed) == (503, "capture_timeout", 0.0, True)
            assert e.value.details["actions"][0]["action"] == CLICK and e.value.retryable is False
            assert c.observation("sb_x")["step"] == 4  # the read was retried
            assert [p for _, p in seen[1:]] == ["/sandboxes/sb_x/observation"] * 2
    finally:
        srv.shutdown()
        srv.server_close()


def test_browser_env_answers_a_step_whose_capture_timed_out_from_a_fresh_observation():
    """BrowserEnv after 503 capture_timeout on a step: not sent again; the observation is read after Retry-After and
    the step ends as the server's episode state ends it (here `done`: terminated, then judged). Against a peer
    answering Grove's wire format for each route (a capture timeout cannot be caused on demand)."""
    import http.server
    import json as _json

    from grove_client.env import BrowserEnv

    seen = []
    obs = {"step": 1, "url": "http://a/", "title": "a", "tabs": [], "last_action_error": None,
           "screenshot": {"mime": "image/png", "width": 1, "height": 1, "base64": "iVBORw0KGgo="}}
    routes = {
        ("POST", "/sandboxes"): (201, {"sandbox_id": "sb_1", "status": "creating", "labels": {}}),
        ("GET", "/sandboxes/sb_1/wait"): (200, {"sandbox_id": "sb_1", "status": "ready", "labels": {}}),
        ("GET", "/sandboxes/sb_1/observation"): (200, obs),
        ("POST", "/sandboxes/sb_1/step"): (503, {"error": {"code": "capture_timeout", "message": "no capture in time", "details": {
            "executed": True, "actions": [{"action": {"action": "answer", "text": "42"}, "error": None, "ms": 1}],
            "done": True, "answer": "42", "step": 1, "url": "http://a/"}}}),
        ("POST", "/sandboxes/sb_1/evaluate"): (200, {"task_id": "t", "reward": 1, "judge_error": None, "dropped": False,
                                                      "verdict": None, "termination": {"reason": "task_completed"}, "steps": 1,
                                                      "answer": "42", "reward_rules": "grove", "format_rewards": None}),
        ("DELETE", "/sandboxes/sb_1"): (204, None),
    }

    class Peer(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle_any(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            path = self.path.split("?")[0]
            seen.append((self.command, path))
            status, body = routes[(self.command, path)]
            data = b"" if body is None else _json.dumps(body).encode()
            self.send_response(status)
            if data:
                self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            if status == 503:
                self.send_header("retry-after", "0")
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = handle_any

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Peer)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with BrowserEnv(f"http://127.0.0.1:{srv.server_address[1]}", "k" * 8, task={"suite": "offline", "id": "t"}) as env:
            env.reset()
            o, reward, term, trunc, info = env.step({"action": "answer", "text": "42"})
            assert (reward, term, trunc) == (1.0, True, False) and o["screenshot"][:4] == b"\x89PNG"
            assert info["capture_timeout"]["message"] == "no capture in time" and info["answer"] == "42"
            assert seen.count(("POST", "/sandboxes/sb_1/step")) == 1  # never sent again
            assert seen[-2:] == [("GET", "/sandboxes/sb_1/observation"), ("POST", "/sandboxes/sb_1/evaluate")]
    finally:
        srv.shutdown()
        srv.server_close()
