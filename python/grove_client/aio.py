"""asyncio client of the Grove REST API: the same methods as ``Client``, as coroutines, plus
``AsyncClient.sandbox()`` (an async context manager that always deletes its sandbox, with an optional
heartbeat task)."""

from __future__ import annotations

import asyncio
import base64
from typing import Any, Iterable, Mapping

from ._aio_http import AsyncTransport
from ._core import Endpoint, RetryPolicy, check_fields, decode_json, drop_none, require_screenshot
from ._bodies import creation_body, label_query, step_body
from ._routes import BY_ID
from .client import DEFAULT_URL
from .errors import GroveApiError, SandboxFailedError
from .images import to_array


class AsyncClient:
    def __init__(self, base_url: str = DEFAULT_URL, api_key: str | None = None, *, timeout: float = 120.0,
                 retry: RetryPolicy | None = None, max_connections: int = 64) -> None:
        self.endpoint = Endpoint(base_url, api_key, timeout)
        self._t = AsyncTransport(self.endpoint, retry or RetryPolicy(), max_idle=max_connections)
        self._owned: set[str] = set()

    async def _call(self, name, path=None, query=None, body=None, timeout=None, accept="application/json"):
        return await self._t.send(self.endpoint.request(name, path, query, body, timeout, accept))

    async def _json(self, name, path=None, query=None, body=None, timeout=None) -> Any:
        return decode_json(await self._call(name, path, query, body, timeout))

    async def aclose(self) -> None:
        """Deletes the sandboxes this client created that are still open, then closes its connections."""
        ids, self._owned = list(self._owned), set()
        await asyncio.gather(*(self._delete_quietly(s) for s in ids))
        await self._t.close()

    async def _delete_quietly(self, sid: str) -> None:
        try:
            await self.delete_sandbox(sid)
        except GroveApiError:
            pass

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.shield(self.aclose())

    # --- sandboxes ------------------------------------------------------------------------------------------
    async def create_sandbox(self, type: str = "browser", **options: Any) -> dict:
        info = await self._json("createSandbox", body=creation_body(type, options))
        self._owned.add(info["sandbox_id"])
        return info

    async def create_sandboxes(self, count: int | None = None, sandbox: Mapping[str, Any] | None = None,
                               sandboxes: list[Mapping[str, Any]] | None = None) -> list[dict]:
        infos = (await self._json("createSandboxes", body=drop_none({"count": count, "sandbox": sandbox, "sandboxes": sandboxes})))["sandboxes"]
        self._owned.update(i["sandbox_id"] for i in infos)
        return infos

    async def list_sandboxes(self, label: Mapping[str, str] | Iterable[str] | None = None) -> list[dict]:
        return (await self._json("listSandboxes", query={"label": label_query(label)}))["sandboxes"]

    async def get_sandbox(self, id: str) -> dict:
        return await self._json("getSandbox", {"id": id})

    async def wait_sandbox(self, id: str, timeout: float = 30) -> dict:
        return await self._json("waitSandbox", {"id": id}, {"timeout": timeout}, timeout=timeout + self.endpoint.timeout)

    async def wait_ready(self, id: str, timeout: float = 60) -> dict:
        info = await self.wait_sandbox(id, timeout)
        if info["status"] == "error":
            raise SandboxFailedError.of(info.get("error"))
        if info["status"] == "creating":
            raise GroveApiError(0, "timeout", f"sandbox {id} not ready after {timeout} s")
        return info

    async def heartbeat(self, id: str) -> dict:
        return await self._json("heartbeat", {"id": id})

    async def delete_sandbox(self, id: str) -> None:
        await self._call("deleteSandbox", {"id": id})
        self._owned.discard(id)

    def sandbox(self, type: str = "browser", *, ready_timeout: float = 60, heartbeat_interval: float | None = None,
                **options: Any) -> "AsyncSandbox":
        return AsyncSandbox(self, type, options, ready_timeout, heartbeat_interval)

    # --- browser --------------------------------------------------------------------------------------------
    async def step(self, id: str, action: Mapping[str, Any] | None = None, *, actions: list | None = None,
                   model_output: str | None = None, format: str | None = None, screenshot: str | None = None,
                   som: bool | None = None, accessibility: bool | None = None, som_overlay: bool | None = None) -> dict:
        body = step_body(action, actions, model_output, format, screenshot, som, accessibility, som_overlay)
        r = await self._json("step", {"id": id}, body=body)
        executed = bool((r.get("parse") or {}).get("ok", True))  # unparsed model text ran nothing
        return require_screenshot(r, screenshot, f"POST /sandboxes/{id}/step", executed=executed)

    async def reset_sandbox(self, id: str, *, start_url: str | None = None, network: Mapping[str, Any] | None = None) -> dict:
        """POST /sandboxes/{id}/reset: a fresh browser context at the start page (the episode starts again)."""
        return await self._json("resetSandbox", {"id": id}, body=drop_none({"start_url": start_url, "network": network}))

    async def observation(self, id: str, *, screenshot: str | None = None, som: bool | None = None,
                          accessibility: bool | None = None, som_overlay: bool | None = None) -> dict:
        q = {"screenshot": screenshot, "som": som, "accessibility": accessibility, "som_overlay": som_overlay}
        return require_screenshot(await self._json("observation", {"id": id}, q), screenshot,
                                  f"GET /sandboxes/{id}/observation", executed=False)

    async def screenshot(self, id: str) -> bytes:
        return (await self._call("screenshot", {"id": id}, accept="image/*")).body

    async def screenshot_array(self, id: str) -> Any:
        return to_array(await self.screenshot(id))

    async def evaluate(self, id: str, *, answer: str | None = None) -> dict:
        return await self._json("evaluate", {"id": id}, body=drop_none({"answer": answer}))

    async def tasks(self, suite: str) -> list[dict]:
        """GET /tasks?suite=: the tasks of a suite (see ``Client.tasks``)."""
        return (await self._json("listTasks", query={"suite": suite}))["tasks"]

    async def list_downloads(self, id: str) -> list[dict]:
        return (await self._json("listDownloads", {"id": id}))["downloads"]

    async def get_download(self, id: str, download_id: str) -> bytes:
        return (await self._call("getDownload", {"id": id, "download_id": download_id}, accept="application/octet-stream")).body

    # --- shell ----------------------------------------------------------------------------------------------
    async def exec(self, id: str, command: str | list, **options: Any) -> dict:
        """POST /sandboxes/{id}/exec (``cwd``, ``env``, ``stdin``, ``timeout_s``, ``background``, ...)."""
        check_fields("exec", options, BY_ID["exec"].body)
        timeout = float(options.get("timeout_s") or 300) + self.endpoint.timeout
        return await self._json("exec", {"id": id}, body={"command": command, **drop_none(options)}, timeout=timeout)

    async def get_job(self, id: str, job_id: str, *, wait: float | None = None) -> dict:
        return await self._json("getJob", {"id": id, "job_id": job_id}, {"wait": wait},
                          timeout=(wait or 0) + self.endpoint.timeout)

    async def upload_file(self, id: str, path: str, content: bytes | str, *, mode: int | None = None,
                    encoding: str | None = None) -> dict:
        """POST /sandboxes/{id}/files: bytes go as base64, text as utf-8 (``encoding`` only to send text as is)."""
        if encoding is not None:
            body = {"path": path, "content": content, "encoding": encoding}
        elif isinstance(content, (bytes, bytearray)):
            body = {"path": path, "content": base64.b64encode(content).decode(), "encoding": "base64"}
        else:
            body = {"path": path, "content": content, "encoding": "utf8"}
        return await self._json("uploadFile", {"id": id}, body=drop_none({**body, "mode": mode}))

    async def download_file(self, id: str, path: str) -> bytes:
        return (await self._call("downloadFile", {"id": id}, {"path": path}, accept="application/octet-stream")).body

    async def list_files(self, id: str, path: str = ".") -> dict:
        return await self._json("listFiles", {"id": id}, {"path": path})

    async def apply_patch(self, id: str, patch: str, *, cwd: str | None = None, timeout_s: float | None = None) -> dict:
        return await self._json("applyPatch", {"id": id}, body=drop_none({"patch": patch, "cwd": cwd, "timeout_s": timeout_s}))

    async def execute(self, id: str, command: str, *, cwd: str | None = None, timeout: float | None = None) -> dict:
        """POST /sandboxes/{id}/execute: mini-SWE-agent's execute (``{output, returncode, exception_info}``)."""
        return await self._json("miniSweExecute", {"id": id}, body=drop_none({"command": command, "cwd": cwd, "timeout": timeout}),
                          timeout=(timeout or 300) + self.endpoint.timeout)

    # --- claw (mock productivity apps) -----------------------------------------------------------------------
    async def claw_tools(self, id: str) -> list:
        return (await self._json("clawTools", {"id": id}))["tools"]

    async def claw_call(self, id: str, tool: str, arguments: Mapping[str, Any] | None = None, *, actor: str | None = None) -> dict:
        return await self._json("clawCall", {"id": id}, body=drop_none({"tool": tool, "arguments": arguments or {}, "actor": actor}))

    async def claw_state(self, id: str) -> dict:
        return (await self._json("clawState", {"id": id}))["state"]

    async def claw_audit(self, id: str, *, since: int | None = None) -> list:
        return (await self._json("clawAudit", {"id": id}, {"since": since}))["entries"]

    async def claw_reset(self, id: str, *, task_id: str | None = None) -> dict:
        """Back to the seed; with ``task_id``, a new episode of that built-in task in this sandbox."""
        return await self._json("clawReset", {"id": id}, body=drop_none({"task_id": task_id}))

    async def claw_grade(self, id: str, *, answer: str | None = None) -> dict:
        return await self._json("clawGrade", {"id": id}, body=drop_none({"answer": answer}))

    async def claw_eval_tools(self, id: str) -> list:
        return (await self._json("clawEvalTools", {"id": id}))["tools"]

    async def claw_eval_call(self, id: str, tool: str, arguments: Mapping[str, Any] | None = None) -> dict:
        return await self._json("clawEvalCall", {"id": id}, body={"tool": tool, "arguments": arguments or {}})

    async def claw_eval_reply(self, id: str, text: str) -> dict:
        return await self._json("clawEvalReply", {"id": id}, body={"text": text})

    async def claw_eval_grade(self, id: str, *, answer: str | None = None) -> dict:
        return await self._json("clawEvalGrade", {"id": id}, body=drop_none({"answer": answer}))

    # --- service --------------------------------------------------------------------------------------------
    async def mcp_token(self, id: str) -> dict:
        """The sandbox's MCP endpoint and its own bearer token: ``{sandbox_id, server, path, token, transport}``.

        Connect an MCP client (Streamable HTTP) to ``base_url + path`` with ``Authorization: Bearer <token>``;
        the token opens only this sandbox's MCP endpoint, none of Grove's API, so it can be handed to a harness.
        """
        return await self._json("mcpToken", {"id": id})

    async def health(self) -> dict:
        return await self._json("health")

    async def metrics(self) -> str:
        return (await self._call("metrics", accept="text/plain")).body.decode()

    async def openapi(self) -> dict:
        return await self._json("openapi")


class AsyncSandbox:
    def __init__(self, client: AsyncClient, type: str, options: Mapping[str, Any], ready_timeout: float,
                 heartbeat_interval: float | None) -> None:
        self.client = client
        self.type = type
        self.options = dict(options)
        self.ready_timeout = ready_timeout
        self.heartbeat_interval = heartbeat_interval
        self.id: str | None = None
        self.info: dict | None = None
        self._beat: asyncio.Task | None = None

    async def open(self) -> "AsyncSandbox":
        info = await self.client.create_sandbox(self.type, **self.options)
        self.id = info["sandbox_id"]
        try:
            self.info = await self.client.wait_ready(self.id, self.ready_timeout)
            if self.heartbeat_interval:
                self._beat = asyncio.get_running_loop().create_task(self._heartbeat_loop())
        except BaseException:
            await asyncio.shield(self.close())
            raise
        return self

    async def _heartbeat_loop(self) -> None:
        assert self.heartbeat_interval
        while True:
            await asyncio.sleep(self.heartbeat_interval)
            try:
                await self.client.heartbeat(self.id)  # type: ignore[arg-type]
            except GroveApiError as e:
                if e.code in ("sandbox_closed", "sandbox_not_found"):
                    return

    async def close(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None
        if self.id is None:
            return
        sid, self.id = self.id, None
        try:
            await self.client.delete_sandbox(sid)
        except GroveApiError:
            pass

    async def __aenter__(self) -> "AsyncSandbox":
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        # Shielded: a cancelled task (Ctrl-C under asyncio.run cancels the main task) still deletes its sandbox.
        await asyncio.shield(self.close())

    def _sid(self) -> str:
        if self.id is None:
            raise RuntimeError("the sandbox is not open")
        return self.id

    async def step(self, action: Mapping[str, Any] | None = None, **kw: Any) -> dict:
        return await self.client.step(self._sid(), action, **kw)

    async def observation(self, **kw: Any) -> dict:
        return await self.client.observation(self._sid(), **kw)

    async def screenshot(self) -> bytes:
        return await self.client.screenshot(self._sid())

    async def evaluate(self, **kw: Any) -> dict:
        return await self.client.evaluate(self._sid(), **kw)

    async def heartbeat(self) -> dict:
        return await self.client.heartbeat(self._sid())
