"""Sync client of the Grove REST API: one method per route, plus ``Client.sandbox()``, a context manager that
always deletes its sandbox (sandbox.py). The request bodies it shares with the async client are in _bodies.py."""

from __future__ import annotations

import base64
import threading
from typing import Any, Iterable, Mapping

from ._bodies import creation_body, label_query, step_body
from ._core import Endpoint, RetryPolicy, check_fields, decode_json, drop_none, require_screenshot, screenshot_bytes
from ._http import SyncTransport
from ._routes import BY_ID
from .errors import GroveApiError, SandboxFailedError
from .images import to_array
from .sandbox import Sandbox

DEFAULT_URL = "http://127.0.0.1:8321"


class Client:
    """``Client(base_url, api_key)``. Thread-safe: each thread keeps its own keep-alive connection.

    As a context manager it closes its connections and deletes every sandbox it created that is still open.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.endpoint = Endpoint(base_url, api_key, timeout)
        self._t = SyncTransport(self.endpoint, retry or RetryPolicy())
        self._owned: set[str] = set()
        self._owned_lock = threading.Lock()

    # --- plumbing -------------------------------------------------------------------------------------------
    def _call(self, name: str, path: Mapping[str, str] | None = None, query=None, body=None, timeout=None, accept="application/json"):
        return self._t.send(self.endpoint.request(name, path, query, body, timeout, accept))

    def _json(self, name: str, path=None, query=None, body=None, timeout=None) -> Any:
        return decode_json(self._call(name, path, query, body, timeout))

    def close(self) -> None:
        """Deletes the sandboxes this client created that are still open, then closes its connections."""
        with self._owned_lock:
            ids, self._owned = list(self._owned), set()
        for sid in ids:
            try:
                self.delete_sandbox(sid)
            except GroveApiError:
                pass
        self._t.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- sandboxes ------------------------------------------------------------------------------------------
    def create_sandbox(self, type: str = "browser", **options: Any) -> dict:
        """POST /sandboxes. Options as in CreateSandboxBody (``start_url``, ``viewport``, ``task``, ``labels``...)."""
        info = self._json("createSandbox", body=creation_body(type, options))
        with self._owned_lock:
            self._owned.add(info["sandbox_id"])
        return info

    def create_sandboxes(self, count: int | None = None, sandbox: Mapping[str, Any] | None = None,
                         sandboxes: list[Mapping[str, Any]] | None = None) -> list[dict]:
        """POST /sandboxes/batch: ``count`` copies of ``sandbox``, or one per entry of ``sandboxes``; all or nothing."""
        body = drop_none({"count": count, "sandbox": sandbox, "sandboxes": sandboxes})
        infos = self._json("createSandboxes", body=body)["sandboxes"]
        with self._owned_lock:
            self._owned.update(i["sandbox_id"] for i in infos)
        return infos

    def list_sandboxes(self, label: Mapping[str, str] | Iterable[str] | None = None) -> list[dict]:
        """GET /sandboxes, optionally filtered by labels (``{"run": "r1"}`` or ``["run=r1"]``; all must match)."""
        return self._json("listSandboxes", query={"label": label_query(label)})["sandboxes"]

    def get_sandbox(self, id: str) -> dict:
        return self._json("getSandbox", {"id": id})

    def wait_sandbox(self, id: str, timeout: float = 30) -> dict:
        """GET /sandboxes/{id}/wait: the info once the sandbox leaves ``creating`` (or after ``timeout`` s)."""
        return self._json("waitSandbox", {"id": id}, {"timeout": timeout}, timeout=timeout + self.endpoint.timeout)

    def wait_ready(self, id: str, timeout: float = 60) -> dict:
        """Waits for ``ready``; raises SandboxFailedError when creation failed, GroveApiError on timeout."""
        info = self.wait_sandbox(id, timeout)
        if info["status"] == "error":
            raise SandboxFailedError.of(info.get("error"))
        if info["status"] == "creating":
            raise GroveApiError(0, "timeout", f"sandbox {id} not ready after {timeout} s")
        return info

    def heartbeat(self, id: str) -> dict:
        return self._json("heartbeat", {"id": id})

    def delete_sandbox(self, id: str) -> None:
        """DELETE /sandboxes/{id} (idempotent on the server)."""
        self._call("deleteSandbox", {"id": id})
        with self._owned_lock:
            self._owned.discard(id)

    def sandbox(self, type: str = "browser", *, ready_timeout: float = 60, heartbeat_interval: float | None = None,
                **options: Any) -> "Sandbox":
        """A context manager: creates the sandbox, waits until it is ready, deletes it on exit (always)."""
        return Sandbox(self, type, options, ready_timeout, heartbeat_interval)

    # --- browser --------------------------------------------------------------------------------------------
    def step(self, id: str, action: Mapping[str, Any] | None = None, *, actions: list | None = None,
             model_output: str | None = None, format: str | None = None, screenshot: str | None = None,
             som: bool | None = None, accessibility: bool | None = None, som_overlay: bool | None = None) -> dict:
        """POST /sandboxes/{id}/step. With ``screenshot="binary"`` the image arrives as raw bytes in
        ``observation.screenshot.bytes`` (multipart on the wire, no base64)."""
        body = step_body(action, actions, model_output, format, screenshot, som, accessibility, som_overlay)
        r = self._json("step", {"id": id}, body=body)
        executed = bool((r.get("parse") or {}).get("ok", True))  # unparsed model text ran nothing
        return require_screenshot(r, screenshot, f"POST /sandboxes/{id}/step", executed=executed)

    def reset_sandbox(self, id: str, *, start_url: str | None = None, network: Mapping[str, Any] | None = None) -> dict:
        """POST /sandboxes/{id}/reset: a fresh browser context at the start page (the episode starts again)."""
        return self._json("resetSandbox", {"id": id}, body=drop_none({"start_url": start_url, "network": network}))

    def observation(self, id: str, *, screenshot: str | None = None, som: bool | None = None,
                    accessibility: bool | None = None, som_overlay: bool | None = None) -> dict:
        q = {"screenshot": screenshot, "som": som, "accessibility": accessibility, "som_overlay": som_overlay}
        return require_screenshot(self._json("observation", {"id": id}, q), screenshot,
                                  f"GET /sandboxes/{id}/observation", executed=False)

    def screenshot(self, id: str) -> bytes:
        """GET /sandboxes/{id}/screenshot: the image bytes (sandbox format)."""
        return self._call("screenshot", {"id": id}, accept="image/*").body

    def screenshot_array(self, id: str) -> Any:
        """The current screenshot as a numpy array (H, W, 3) (needs numpy; Pillow for JPEG/WebP)."""
        return to_array(self.screenshot(id))

    def evaluate(self, id: str, *, answer: str | None = None) -> dict:
        """POST /sandboxes/{id}/evaluate: the reward of the sandbox's task from its judge, with the judge's record.
        ``reward`` is None with ``judge_error`` when the judge failed (never a silent 0)."""
        return self._json("evaluate", {"id": id}, body=drop_none({"answer": answer}))

    def tasks(self, suite: str) -> list[dict]:
        """GET /tasks?suite=: the tasks a sandbox can be created with (``task={"suite": suite, "id": ...}``): id,
        suite, site, question, level, start_url (not for offline tasks) — never the answers the judge reads.
        An unknown suite raises GroveApiError 404 ``task_not_found``."""
        return self._json("listTasks", query={"suite": suite})["tasks"]

    def list_downloads(self, id: str) -> list[dict]:
        return self._json("listDownloads", {"id": id})["downloads"]

    def get_download(self, id: str, download_id: str) -> bytes:
        return self._call("getDownload", {"id": id, "download_id": download_id}, accept="application/octet-stream").body

    # --- shell ----------------------------------------------------------------------------------------------
    def exec(self, id: str, command: str | list, **options: Any) -> dict:
        """POST /sandboxes/{id}/exec (``cwd``, ``env``, ``stdin``, ``timeout_s``, ``background``, ...)."""
        check_fields("exec", options, BY_ID["exec"].body)
        timeout = float(options.get("timeout_s") or 300) + self.endpoint.timeout
        return self._json("exec", {"id": id}, body={"command": command, **drop_none(options)}, timeout=timeout)

    def get_job(self, id: str, job_id: str, *, wait: float | None = None) -> dict:
        return self._json("getJob", {"id": id, "job_id": job_id}, {"wait": wait},
                          timeout=(wait or 0) + self.endpoint.timeout)

    def upload_file(self, id: str, path: str, content: bytes | str, *, mode: int | None = None,
                    encoding: str | None = None) -> dict:
        """POST /sandboxes/{id}/files: bytes go as base64, text as utf-8 (``encoding`` only to send text as is)."""
        if encoding is not None:
            body = {"path": path, "content": content, "encoding": encoding}
        elif isinstance(content, (bytes, bytearray)):
            body = {"path": path, "content": base64.b64encode(content).decode(), "encoding": "base64"}
        else:
            body = {"path": path, "content": content, "encoding": "utf8"}
        return self._json("uploadFile", {"id": id}, body=drop_none({**body, "mode": mode}))

    def download_file(self, id: str, path: str) -> bytes:
        return self._call("downloadFile", {"id": id}, {"path": path}, accept="application/octet-stream").body

    def list_files(self, id: str, path: str = ".") -> dict:
        return self._json("listFiles", {"id": id}, {"path": path})

    def apply_patch(self, id: str, patch: str, *, cwd: str | None = None, timeout_s: float | None = None) -> dict:
        return self._json("applyPatch", {"id": id}, body=drop_none({"patch": patch, "cwd": cwd, "timeout_s": timeout_s}))

    def execute(self, id: str, command: str, *, cwd: str | None = None, timeout: float | None = None) -> dict:
        """POST /sandboxes/{id}/execute: mini-SWE-agent's execute (``{output, returncode, exception_info}``)."""
        return self._json("miniSweExecute", {"id": id}, body=drop_none({"command": command, "cwd": cwd, "timeout": timeout}),
                          timeout=(timeout or 300) + self.endpoint.timeout)

    # --- claw (mock productivity apps) -----------------------------------------------------------------------
    def claw_tools(self, id: str) -> list:
        return self._json("clawTools", {"id": id})["tools"]

    def claw_call(self, id: str, tool: str, arguments: Mapping[str, Any] | None = None, *, actor: str | None = None) -> dict:
        return self._json("clawCall", {"id": id}, body=drop_none({"tool": tool, "arguments": arguments or {}, "actor": actor}))

    def claw_state(self, id: str) -> dict:
        return self._json("clawState", {"id": id})["state"]

    def claw_audit(self, id: str, *, since: int | None = None) -> list:
        return self._json("clawAudit", {"id": id}, {"since": since})["entries"]

    def claw_reset(self, id: str, *, task_id: str | None = None) -> dict:
        """Back to the seed; with ``task_id``, a new episode of that built-in task in this sandbox."""
        return self._json("clawReset", {"id": id}, body=drop_none({"task_id": task_id}))

    def claw_grade(self, id: str, *, answer: str | None = None) -> dict:
        return self._json("clawGrade", {"id": id}, body=drop_none({"answer": answer}))

    def claw_eval_tools(self, id: str) -> list:
        """The tools of a Claw-Eval task's sandbox (created with ``claw_eval_task``)."""
        return self._json("clawEvalTools", {"id": id})["tools"]

    def claw_eval_call(self, id: str, tool: str, arguments: Mapping[str, Any] | None = None) -> dict:
        """One call on the task's service: ``{status, body, calls}`` (recorded for the task's grader)."""
        return self._json("clawEvalCall", {"id": id}, body={"tool": tool, "arguments": arguments or {}})

    def claw_eval_reply(self, id: str, text: str) -> dict:
        """The agent's turn without tool calls: ``{user, done, rounds}``, the task's simulated user's next message
        (multi-turn tasks), or ``done`` when the conversation is over (then grade)."""
        return self._json("clawEvalReply", {"id": id}, body={"text": text})

    def claw_eval_grade(self, id: str, *, answer: str | None = None) -> dict:
        """Ends the episode; the task's own grader.py scores it (``score`` null when the grader failed)."""
        return self._json("clawEvalGrade", {"id": id}, body=drop_none({"answer": answer}))

    # --- service --------------------------------------------------------------------------------------------
    def mcp_token(self, id: str) -> dict:
        """The sandbox's MCP endpoint and its own bearer token: ``{sandbox_id, server, path, token, transport}``.

        Connect an MCP client (Streamable HTTP) to ``base_url + path`` with ``Authorization: Bearer <token>``;
        the token opens only this sandbox's MCP endpoint, none of Grove's API, so it can be handed to a harness.
        """
        return self._json("mcpToken", {"id": id})

    def health(self) -> dict:
        return self._json("health")

    def metrics(self) -> str:
        return self._call("metrics", accept="text/plain").body.decode()

    def openapi(self) -> dict:
        return self._json("openapi")


__all__ = ["Client", "Sandbox", "screenshot_bytes", "DEFAULT_URL"]
