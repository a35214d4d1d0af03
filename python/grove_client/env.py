"""A gymnasium-style environment over Grove's task-backed sandboxes.

``BrowserEnv.reset(seed=None, options={"task": ...})`` creates a sandbox for the task (``{"suite": "offline",
"id": "Recipes--0"}``, a task of a file the server loaded, or an inline task) and answers ``(obs, info)``;
``step(action | actions | model_text)`` answers ``(obs, reward, terminated, truncated, info)`` with
``terminated`` / ``truncated`` as Grove's episode loop defines them; when the episode ends the task's judge
runs on the server (``POST /sandboxes/{id}/evaluate``) and its reward (a float) is the step's reward. A judge
failure gives ``reward None`` with ``info["judge_error"]`` — never a silent 0. Stepping an episode that has ended
raises ``EpisodeEndedError`` (a ``RuntimeError``): call ``reset()``. ``close()`` deletes the sandbox.

A sandbox start that fails with a retryable error (``browser_start_timeout``, 503, on a loaded machine) is tried
again by ``reset()`` with exponential backoff (``start_retries``).

The class subclasses ``gymnasium.Env`` when gymnasium is importable and has the same API when it is not; with
gymnasium it has ``observation_space`` / ``action_space`` (``grove_client/spaces.py``) and is registered as
``grove/Browser-v0`` (nondeterministic: a web page is), so ``gymnasium.make`` and its env checker work.
``VectorBrowserEnv`` runs N of them concurrently (one thread each, one shared keep-alive client), retrying each
env's start on its own and resetting finished envs as gymnasium's vector API does.
"""

from __future__ import annotations

import random
import time
from typing import Any, Mapping, Sequence

from ._core import screenshot_bytes
from .client import DEFAULT_URL, Client
from .errors import CaptureTimeoutError, EpisodeEndedError, GroveApiError
from .images import to_array

try:  # optional
    import gymnasium as _gym

    from . import spaces as _spaces

    _Base: type = _gym.Env
except ImportError:  # pragma: no cover - depends on the machine
    _gym = None
    _spaces = None  # type: ignore[assignment]
    _Base = object

HAVE_GYMNASIUM = _gym is not None


class BrowserEnv(_Base):  # type: ignore[misc, valid-type]
    """One browser episode at a time on a Grove server.

    - ``task``: the default task of ``reset()`` (``options={"task": ...}`` overrides it per episode).
    - ``sandbox``: creation options (viewport, som, network, resize, ...).
    - ``max_steps``: steps after which ``truncated`` is true; ``reward_rules``: ``"grove"`` or ``"orchard-gui"``.
    - ``format``: the policy output format for text actions (``"qwen3vl"``, ``"orchard"``, ...).
    - ``screenshot``: ``"bytes"`` (default), ``"array"`` (numpy, H×W×3) or ``"none"`` in the observation.
    - ``start_retries`` / ``start_backoff``: retries of a start that failed with a retryable error (503/429), the
      first after ``start_backoff`` seconds, doubling, with jitter.
    """

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, base_url: str = DEFAULT_URL, api_key: str | None = None, *, task: Any = None,
                 sandbox: Mapping[str, Any] | None = None, max_steps: int | None = None, reward_rules: str = "grove",
                 max_consecutive_parse_failures: int = 3, format: str | None = None, screenshot: str = "bytes",
                 som: bool | None = None, client: Client | None = None, ready_timeout: float = 60,
                 render_mode: str | None = None, start_retries: int = 4, start_backoff: float = 1.0) -> None:
        if screenshot not in ("bytes", "array", "none"):
            raise ValueError(f'screenshot must be "bytes", "array" or "none", not {screenshot!r}')
        self.client = client or Client(base_url, api_key)
        self._own_client = client is None
        self.task = task
        self.sandbox_options = dict(sandbox or {})
        self.episode = {"max_steps": max_steps, "reward_rules": reward_rules,
                        "max_consecutive_parse_failures": max_consecutive_parse_failures}
        self.format = format
        self.screenshot_mode = screenshot
        self.som = som
        self.ready_timeout = ready_timeout
        self.render_mode = render_mode
        self.sandbox_id: str | None = None
        self._last_obs: dict | None = None
        self._ended = False
        self._parse_failures = 0
        self.last_evaluation: dict | None = None
        self.start_retries = start_retries
        self.start_backoff = start_backoff
        if _spaces is not None:
            vp = self.sandbox_options.get("viewport") or {}
            self.observation_space = _spaces.observation_space(
                screenshot, (vp.get("width", 1280), vp.get("height", 1000)), max_steps)
            self.action_space = _spaces.action_space(format is not None)

    # --- gym API ----------------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None) -> tuple[dict, dict]:
        if HAVE_GYMNASIUM:
            super().reset(seed=seed)
        self._delete()
        options = dict(options or {})
        task = options.get("task", self.task)
        body = {**self.sandbox_options, **options.get("sandbox", {})}
        if task is not None:
            body["task"] = task
        body["episode"] = {k: v for k, v in {**self.episode, **options.get("episode", {})}.items() if v is not None}
        info, raw = self._start(body)
        self._ended = False
        self._parse_failures = 0
        self.last_evaluation = None
        obs = self._obs(raw)
        return obs, {"sandbox_id": self.sandbox_id, "labels": info.get("labels", {}), "task": task}

    def _start(self, body: dict) -> tuple[dict, dict]:
        """Creates the sandbox and reads its first observation; a retryable failure (503/429: the browser could not
        start in time, no capacity) is tried again after a backoff."""
        attempt = 0
        while True:
            try:
                info = self.client.create_sandbox("browser", **body)
                self.sandbox_id = info["sandbox_id"]
                info = self.client.wait_ready(self.sandbox_id, self.ready_timeout)
                raw = self.client.observation(self.sandbox_id, screenshot=self._wire(), som=self.som)
                return info, raw
            except GroveApiError as e:
                self._delete()
                if not e.retryable or attempt >= self.start_retries:
                    raise
                delay = e.retry_after if e.retry_after is not None else self.start_backoff * 2**attempt
                time.sleep(min(delay, 30.0) * (0.5 + random.random() / 2))
                attempt += 1
            except BaseException:
                self._delete()
                raise

    def step(self, action: Any) -> tuple[dict, Any, bool, bool, dict]:
        """One step. When its screenshot could not be captured in time (503 ``capture_timeout``) the step is not sent
        again (its actions ran): the observation is read after Retry-After and ``info["capture_timeout"]`` says so;
        a read that fails again raises ``CaptureTimeoutError``."""
        if self.sandbox_id is None:
            raise RuntimeError("call reset() first")
        if self._ended:
            raise EpisodeEndedError("the episode has ended (terminated or truncated): call reset()")
        kw: dict[str, Any] = {"screenshot": self._wire(), "som": self.som}
        if isinstance(action, str):
            if not self.format:
                raise ValueError("text actions need BrowserEnv(format=...) (a policy output format name)")
            kw.update(model_output=action, format=self.format)
        elif isinstance(action, Mapping):
            kw["action"] = dict(action)
        elif isinstance(action, Sequence):
            kw["actions"] = [dict(a) for a in action]
        else:
            raise TypeError(f"an action is a dict, a list of dicts or model text, not {type(action).__name__}")
        try:
            r = self.client.step(self.sandbox_id, **kw)
        except CaptureTimeoutError as e:
            r = self._after_capture_timeout(e)
        self._parse_failures = 0 if (r.get("parse") or {}).get("ok", True) else self._parse_failures + 1
        terminated, truncated = bool(r.get("terminated")), bool(r.get("truncated"))
        info: dict[str, Any] = {
            "done": r["done"], "answer": r.get("answer"), "parse": r.get("parse"), "actions": r["actions"],
            "last_action_error": r["observation"].get("last_action_error"),
        }
        if "capture_timeout" in r:
            info["capture_timeout"] = r["capture_timeout"]  # the step's own capture failed; this is a fresh one
        reward: Any = 0.0
        if terminated or truncated:
            self._ended = True
            ev = self.evaluate()
            reward = None if ev["reward"] is None else float(ev["reward"])
            info.update(evaluation=ev, judge_error=ev["judge_error"], dropped=ev["dropped"],
                        termination=ev["termination"])
        return self._obs(r["observation"], executed=True), reward, terminated, truncated, info

    def observation(self) -> dict:
        """The current observation, captured now (after a ``CaptureTimeoutError``: what the step led to)."""
        if self.sandbox_id is None:
            raise RuntimeError("call reset() first")
        return self._obs(self.client.observation(self.sandbox_id, screenshot=self._wire(), som=self.som))

    def _after_capture_timeout(self, e: CaptureTimeoutError) -> dict:
        """A step whose screenshot could not be captured (503 capture_timeout) was counted and, when ``executed``,
        its actions ran: never sent again. The observation is read once more after Retry-After (the client retries
        that read on 503 within its RetryPolicy) and the step answered from it and the error's details, as the
        server's episode state ends it: terminated on an answer / terminate (``done``) or the parse-failure limit,
        truncated at ``max_steps``. A second failure is raised."""
        d = e.details
        if "step" not in d:
            raise e
        time.sleep(min(e.retry_after if e.retry_after is not None else 2.0, 30.0))
        raw = self.client.observation(self.sandbox_id, screenshot=self._wire(), som=self.som)
        parsed = bool(d.get("executed"))
        failures = 0 if parsed else self._parse_failures + 1
        terminated = bool(d.get("done")) or failures >= self.episode["max_consecutive_parse_failures"]
        max_steps = self.episode["max_steps"]
        truncated = not terminated and max_steps is not None and int(d.get("step") or 0) >= max_steps
        return {"observation": raw, "actions": d.get("actions", []), "done": bool(d.get("done")), "answer": d.get("answer"),
                "parse": None if parsed else {"ok": False, "error": e.message}, "terminated": terminated,
                "truncated": truncated, "capture_timeout": {"message": e.message, "retry_after": e.retry_after}}

    def evaluate(self, answer: str | None = None) -> dict:
        """The task's reward now (the server's judge), e.g. for an episode the caller ends itself."""
        if self.sandbox_id is None:
            raise RuntimeError("call reset() first")
        self.last_evaluation = self.client.evaluate(self.sandbox_id, answer=answer)
        return self.last_evaluation

    def render(self) -> Any:
        if self._last_obs is None:
            return None
        shot = self._last_obs.get("screenshot")
        return to_array(shot) if isinstance(shot, (bytes, bytearray)) else shot

    def close(self) -> None:
        self._delete()
        if self._own_client:
            self.client.close()

    # --- helpers ----------------------------------------------------------------------------------------------
    def _wire(self) -> str:
        return "none" if self.screenshot_mode == "none" else "binary"

    def _obs(self, raw: Mapping[str, Any], executed: bool = False) -> dict:
        shot = screenshot_bytes(raw)
        if shot is None and self.screenshot_mode != "none":
            # The server answers 503 capture_timeout rather than an observation without its screenshot; an older
            # server's silent gap is the same explicit error here: a policy must never be fed nothing.
            why = (raw.get("last_action_error") or {}).get("message", "no screenshot was captured")
            raise CaptureTimeoutError(0, "capture_timeout", f"the observation has no screenshot: {why}", None,
                                      {"executed": executed, "step": raw.get("step"), "url": raw.get("url")})
        obs = {
            "url": raw["url"], "title": raw["title"], "tabs": raw["tabs"], "step": raw["step"],
            "last_action_error": raw.get("last_action_error"), "som": raw.get("som"),
            "accessibility": raw.get("accessibility"), "scroll": raw.get("scroll"), "focused": raw.get("focused"),
            "screenshot": (to_array(shot) if self.screenshot_mode == "array" and shot else shot),
            "screenshot_meta": {k: v for k, v in (raw.get("screenshot") or {}).items() if k not in ("bytes", "base64")},
        }
        arr = obs["screenshot"]
        if _spaces is not None and self.screenshot_mode == "array" and arr is not None and \
                self.observation_space["screenshot"].shape != arr.shape:
            # the size the server captures at (a resize option) is known from the first screenshot
            self.observation_space = _spaces.observation_space("array", (arr.shape[1], arr.shape[0]), self.episode["max_steps"])
        self._last_obs = obs
        return obs

    def _delete(self) -> None:
        sid, self.sandbox_id = self.sandbox_id, None
        if sid is not None:
            try:
                self.client.delete_sandbox(sid)
            except GroveApiError:
                pass

    def __enter__(self) -> "BrowserEnv":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


from .vector import VectorBrowserEnv  # noqa: E402  (defined over BrowserEnv; importable from here as before)

if _gym is not None and "grove/Browser-v0" not in _gym.registry:
    _gym.register("grove/Browser-v0", entry_point="grove_client.env:BrowserEnv", nondeterministic=True)
