"""The API's routes as the clients know them: one entry per operation of ``docs/openapi.json``.

``tests/test_openapi.py`` compares this table with the server's OpenAPI document: a route, a parameter or a
body field the server has and this table lacks fails the test, so the client cannot drift silently. Routes
tagged ``orchard-gui`` are another protocol (Orchard-GUI's env server) and are not client methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Route:
    operation_id: str
    method: str
    path: str  # OpenAPI style: /sandboxes/{id}
    query: tuple[str, ...] = ()
    body: tuple[str, ...] = ()
    #: top-level fields of the JSON answer the client relies on or passes through
    response: tuple[str, ...] = ()
    #: the Python method name on Client / AsyncClient
    name: str = field(default="")


_SANDBOX_INFO = ("sandbox_id", "type", "status", "created_at", "last_used_at", "expires_at", "steps", "labels", "error", "shell", "claw", "claw_eval")
_OBSERVATION = (
    "step", "url", "title", "tabs", "viewport", "screenshot", "last_action_error", "events", "som", "scroll", "focused",
    "accessibility", "timings",
    "settle",
)
_OBS_OPTIONS = ("screenshot", "som", "accessibility", "som_overlay")

#: Fields of a browser sandbox's creation options (CreateSandboxBody, type "browser").
BROWSER_OPTIONS = (
    "type", "viewport", "device_scale_factor", "start_url", "user_agent", "locale", "timezone", "screenshot_format", "screenshot_quality",
    "resize", "frame_cache", "coordinate_space", "rel_divisor", "settle", "settle_quiet_ms", "settle_max_ms", "action_timeout_ms",
    "som", "accessibility", "network", "ttl_seconds", "idle_timeout_seconds", "record", "record_har", "replay_har",
    "labels", "task", "episode", "claw_sandbox",
)
#: Fields of a claw sandbox's creation options (mock productivity apps).
CLAW_OPTIONS = ("type", "apps", "claw_eval_task", "faults", "state", "task_id", "tools", "world_seed", "ttl_seconds", "idle_timeout_seconds", "labels")
#: Fields of a shell sandbox's creation options.
SHELL_OPTIONS = (
    "type", "block_network", "ttl_seconds", "idle_timeout_seconds", "labels", "image", "allow", "cpu", "memory_mb",
    "max_processes", "env", "claw_sandbox", "disk_mb", "egress_max_connections", "egress_idle_timeout_s",
)

ROUTES: tuple[Route, ...] = (
    Route("createSandbox", "POST", "/sandboxes", body=tuple(sorted(set(BROWSER_OPTIONS) | set(SHELL_OPTIONS) | set(CLAW_OPTIONS))), response=_SANDBOX_INFO),
    Route("createSandboxes", "POST", "/sandboxes/batch", body=("count", "sandbox", "sandboxes"), response=("sandboxes",)),
    Route("listSandboxes", "GET", "/sandboxes", query=("label",), response=("sandboxes",)),
    Route("getSandbox", "GET", "/sandboxes/{id}", response=_SANDBOX_INFO),
    Route("waitSandbox", "GET", "/sandboxes/{id}/wait", query=("timeout",), response=_SANDBOX_INFO),
    Route("heartbeat", "POST", "/sandboxes/{id}/heartbeat", response=_SANDBOX_INFO),
    Route("deleteSandbox", "DELETE", "/sandboxes/{id}"),
    Route(
        "step", "POST", "/sandboxes/{id}/step",
        body=("action", "actions", "model_output", "format") + _OBS_OPTIONS,
        response=("observation", "actions", "done", "answer", "parse", "terminated", "truncated"),
    ),
    Route("resetSandbox", "POST", "/sandboxes/{id}/reset", body=("start_url", "network"), response=_SANDBOX_INFO),
    Route("observation", "GET", "/sandboxes/{id}/observation", query=_OBS_OPTIONS, response=_OBSERVATION),
    Route("screenshot", "GET", "/sandboxes/{id}/screenshot"),
    Route("evaluate", "POST", "/sandboxes/{id}/evaluate", body=("answer",),
          response=("reward", "judge_error", "verdict", "dropped", "termination", "steps", "task_id", "answer", "reward_rules",
                    "format_rewards")),
    Route("listTasks", "GET", "/tasks", query=("suite",), response=("suite", "tasks", "suites"), name="tasks"),
    Route("listDownloads", "GET", "/sandboxes/{id}/downloads", response=("downloads",)),
    Route("getDownload", "GET", "/sandboxes/{id}/downloads/{download_id}"),
    # shell sandboxes
    Route("exec", "POST", "/sandboxes/{id}/exec",
          body=("command", "cwd", "env", "stdin", "timeout_s", "max_output_bytes", "merge_stderr", "login_shell", "background"),
          response=("exit_code", "stdout", "stderr", "stdout_bytes", "stderr_bytes", "merged", "signal", "timed_out", "truncated",
                    "duration_ms", "job_id", "status")),
    Route("getJob", "GET", "/sandboxes/{id}/jobs/{job_id}", query=("wait",),
          response=("job_id", "sandbox_id", "command", "status", "created_at", "finished_at", "result")),
    Route("uploadFile", "POST", "/sandboxes/{id}/files", body=("path", "content", "encoding", "mode"), response=("path", "size")),
    Route("downloadFile", "GET", "/sandboxes/{id}/files", query=("path",)),
    Route("listFiles", "GET", "/sandboxes/{id}/files/list", query=("path",), response=("path", "files")),
    Route("applyPatch", "POST", "/sandboxes/{id}/apply_patch", body=("patch", "cwd", "timeout_s"),
          response=("success", "exit_code", "stdout", "stderr")),
    Route("miniSweExecute", "POST", "/sandboxes/{id}/execute", body=("command", "cwd", "timeout"),
          response=("output", "returncode", "exception_info"), name="execute"),
    # claw sandboxes (mock productivity apps)
    Route("clawTools", "GET", "/sandboxes/{id}/claw/tools", response=("tools",)),
    Route("clawCall", "POST", "/sandboxes/{id}/claw/call", body=("tool", "arguments", "actor"),
          response=("status", "result", "error", "changes", "seq", "retry_after")),
    Route("clawState", "GET", "/sandboxes/{id}/claw/state", response=("state",)),
    Route("clawAudit", "GET", "/sandboxes/{id}/claw/audit", query=("since",), response=("entries",)),
    Route("clawReset", "POST", "/sandboxes/{id}/claw/reset", body=("task_id",), response=("ok",)),
    Route("clawGrade", "POST", "/sandboxes/{id}/claw/grade", body=("answer",)),
    # claw sandboxes of a Claw-Eval task (claw_eval_task; the server started with --claw-eval DIR)
    Route("clawEvalTools", "GET", "/sandboxes/{id}/claw-eval/tools", response=("tools",)),
    Route("clawEvalCall", "POST", "/sandboxes/{id}/claw-eval/call", body=("tool", "arguments"), response=("status", "body", "calls")),
    Route("clawEvalReply", "POST", "/sandboxes/{id}/claw-eval/reply", body=("text",), response=("user", "done", "rounds")),
    Route("clawEvalGrade", "POST", "/sandboxes/{id}/claw-eval/grade", body=("answer",),
          response=("task_id", "score", "task_score", "passed", "scores", "judge_calls", "tool_calls", "errored", "error")),
    # the sandbox's MCP endpoint (Streamable HTTP at `path`, opened by `token`, not by Grove's key)
    Route("mcpToken", "GET", "/sandboxes/{id}/mcp/token", response=("sandbox_id", "server", "path", "token", "transport")),
    Route("health", "GET", "/health", response=("status", "version", "uptime_s", "sandboxes")),
    Route("metrics", "GET", "/metrics"),
    Route("openapi", "GET", "/openapi.json"),
)


def snake(operation_id: str) -> str:
    out = []
    for ch in operation_id:
        if ch.isupper():
            out.append("_" + ch.lower())
        else:
            out.append(ch)
    return "".join(out)


ROUTES = tuple(Route(**{**r.__dict__, "name": r.name or snake(r.operation_id)}) for r in ROUTES)
BY_NAME = {r.name: r for r in ROUTES}
BY_ID = {r.operation_id: r for r in ROUTES}
