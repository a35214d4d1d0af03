"""A gymnasium-style environment over Grove's task-backed sandboxes.

``BrowserEnv.reset(seed=None, options={"task": ...})`` creates a sandbox for the task (``{"suite": "offline",
"id": "Recipes--0"}``, a task of a file the server loaded, or an inline task) and answers ``(obs, info)``;
``step(action | actions | model_text)`` answers ``(obs, reward, terminated, truncated, info)`` with
``terminated`` / ``truncated`` as Grove's episode loop defines them; when the episode ends the task's judge
runs on the server (``POST /sandboxes/{id}/evaluate``) and its reward is the step's reward. A judge failure
gives ``reward None`` with ``info["judge_error"]`` — never a silent 0. ``close()`` deletes the sandbox.

The class subclasses ``gymnasium.Env`` when gymnasium is importable and has the same API when it is not.
``VectorBrowserEnv`` runs N of them concurrently (one thread each, one shared keep-alive client).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Mapping, Sequence

from ._core import screenshot_bytes
from .client import DEFAULT_URL, Client
from .errors import GroveApiError
from .images import to_array

try:  # optional
    import gymnasium as _gym

    _Base: type = _gym.Env
except ImportError:  # pragma: no cover - depends on the machine
    _gym = None
    _Base = object

HAVE_GYMNASIUM = _gym is not None


class BrowserEnv(_Base):  # type: ignore[misc, valid-type]
    """One browser episode at a time on a Grove server.

    - ``task``: the default task of ``reset()`` (``options={"task": ...}`` overrides it per episode).
    - ``sandbox``: creation options (viewport, som, network, resize, ...).
    - ``max_steps``: steps after which ``truncated`` is true; ``reward_rules``: ``"grove"`` or ``"orchard-gui"``.
    - ``format``: the policy output format for text actions (``"qwen3vl"``, ``"orchard"``, ...).
    - ``screenshot``: ``"bytes"`` (default), ``"array"`` (numpy, H×W×3) or ``"none"`` in the observation.
    """

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, base_url: str = DEFAULT_URL, api_key: str | None = None, *, task: Any = None,
                 sandbox: Mapping[str, Any] | None = None, max_steps: int | None = None, reward_rules: str = "grove",
                 max_consecutive_parse_failures: int = 3, format: str | None = None, screenshot: str = "bytes",
                 som: bool | None = None, client: Client | None = None, ready_timeout: float = 60,
                 render_mode: str | None = None) -> None:
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
        self.last_evaluation: dict | None = None

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
        info = self.client.create_sandbox("browser", **body)
        self.sandbox_id = info["sandbox_id"]
        try:
            info = self.client.wait_ready(self.sandbox_id, self.ready_timeout)
            raw = self.client.observation(self.sandbox_id, screenshot=self._wire(), som=self.som)
        except BaseException:
            self._delete()
            raise
        self._ended = False
        self.last_evaluation = None
        obs = self._obs(raw)
        return obs, {"sandbox_id": self.sandbox_id, "labels": info.get("labels", {}), "task": task}

    def step(self, action: Any) -> tuple[dict, Any, bool, bool, dict]:
        if self.sandbox_id is None:
            raise RuntimeError("call reset() first")
        if self._ended:
            raise RuntimeError("the episode has ended (terminated or truncated): call reset()")
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
        r = self.client.step(self.sandbox_id, **kw)
        terminated, truncated = bool(r.get("terminated")), bool(r.get("truncated"))
        info: dict[str, Any] = {
            "done": r["done"], "answer": r.get("answer"), "parse": r.get("parse"), "actions": r["actions"],
            "last_action_error": r["observation"].get("last_action_error"),
        }
        reward: Any = 0.0
        if terminated or truncated:
            self._ended = True
            ev = self.evaluate()
            reward = ev["reward"]
            info.update(evaluation=ev, judge_error=ev["judge_error"], dropped=ev["dropped"],
                        termination=ev["termination"])
        return self._obs(r["observation"]), reward, terminated, truncated, info

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

    def _obs(self, raw: Mapping[str, Any]) -> dict:
        shot = screenshot_bytes(raw)
        obs = {
            "url": raw["url"], "title": raw["title"], "tabs": raw["tabs"], "step": raw["step"],
            "last_action_error": raw.get("last_action_error"), "som": raw.get("som"),
            "accessibility": raw.get("accessibility"),
            "screenshot": (to_array(shot) if self.screenshot_mode == "array" and shot else shot),
            "screenshot_meta": {k: v for k, v in (raw.get("screenshot") or {}).items() if k not in ("bytes", "base64")},
        }
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


class VectorBrowserEnv:
    """N ``BrowserEnv`` run concurrently: ``reset(options=[...])`` and ``step(actions)`` take and answer one
    entry per env (lists), each env stepping in its own thread over one shared keep-alive client. An env whose
    episode ended is reset with its next ``options`` entry by ``reset_done(options)``."""

    def __init__(self, num_envs: int, base_url: str = DEFAULT_URL, api_key: str | None = None, **env_kwargs: Any) -> None:
        self.client = Client(base_url, api_key)
        self.envs = [BrowserEnv(client=self.client, **env_kwargs) for _ in range(num_envs)]
        self.num_envs = num_envs
        self._pool = ThreadPoolExecutor(max_workers=num_envs, thread_name_prefix="grove-env")

    def reset(self, *, seed: int | None = None, options: Sequence[Mapping[str, Any] | None] | None = None) -> tuple[list, list]:
        opts = list(options) if options is not None else [None] * self.num_envs
        out = list(self._pool.map(lambda ie: ie[1].reset(seed=None if seed is None else seed + ie[0], options=opts[ie[0]]),
                                  enumerate(self.envs)))
        return [o for o, _ in out], [i for _, i in out]

    def step(self, actions: Sequence[Any]) -> tuple[list, list, list, list, list]:
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} envs")
        out = list(self._pool.map(lambda ea: ea[0].step(ea[1]), zip(self.envs, actions)))
        return tuple(list(x) for x in zip(*out))  # type: ignore[return-value]

    def close(self) -> None:
        for e in self.envs:
            e.close()
        self._pool.shutdown(wait=True)
        self.client.close()

    def __enter__(self) -> "VectorBrowserEnv":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
