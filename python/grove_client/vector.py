"""``VectorBrowserEnv``: N ``BrowserEnv`` run concurrently (also importable from ``grove_client.env``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Mapping, Sequence

from .client import DEFAULT_URL, Client
from .env import BrowserEnv, _spaces
from .errors import GroveApiError


class VectorBrowserEnv:
    """N ``BrowserEnv`` run concurrently: ``reset(options=[...])`` and ``step(actions)`` take and answer one
    entry per env (lists), each env stepping in its own thread over one shared keep-alive client.

    - Each env's start is retried on its own (``start_retries`` with backoff, as ``BrowserEnv``): one slow start
      delays that env, never fails the others. ``reset`` raises only when an env still cannot start.
    - Finished envs are reset as gymnasium's vector API does. ``autoreset_mode="next_step"`` (gymnasium ≥ 1.0's
      default): the step after an env's episode ended resets that env instead of stepping it (its action is
      ignored) and answers the new episode's first observation with reward 0.0, ``terminated`` / ``truncated``
      false and ``info["autoreset"]`` true. ``"same_step"``: the ending step resets the env at once, answers the
      new episode's observation and keeps the ended one in ``info["final_obs"]`` / ``info["final_info"]``.
      ``reset_options(i)`` gives the options of an automatic reset of env ``i`` (default: its last ones).
    - An env whose sandbox is lost mid-episode (a ``GroveApiError`` from its step: expired, worker gone, a capture
      that failed twice) ends its episode as truncated with ``info["env_error"]`` (code, message) and ``info["dropped"]`` true, reward 0.0,
      and is reset like any finished env; an automatic reset that still fails after its retries answers
      ``obs None``, truncated, with ``info["env_error"]``, and is tried again at the next step.
    """

    def __init__(self, num_envs: int, base_url: str = DEFAULT_URL, api_key: str | None = None, *,
                 autoreset_mode: str = "next_step", reset_options: Any = None, **env_kwargs: Any) -> None:
        if autoreset_mode not in ("next_step", "same_step"):
            raise ValueError(f'autoreset_mode must be "next_step" or "same_step", not {autoreset_mode!r}')
        self.client = Client(base_url, api_key)
        self.envs = [BrowserEnv(client=self.client, **env_kwargs) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.autoreset_mode = autoreset_mode
        self.reset_options = reset_options
        self._options: list[Mapping[str, Any] | None] = [None] * num_envs
        self._pending_reset = [False] * num_envs
        self._pool = ThreadPoolExecutor(max_workers=num_envs, thread_name_prefix="grove-env")
        if _spaces is not None and self.envs:
            self.single_observation_space = self.envs[0].observation_space
            self.single_action_space = self.envs[0].action_space

    def _run(self, fn) -> list:
        """fn(i) for every env at once; every call finishes before the first error (if any) is raised."""
        futures = [self._pool.submit(fn, i) for i in range(self.num_envs)]
        out, first = [], None
        for f in futures:
            try:
                out.append(f.result())
            except BaseException as e:  # noqa: BLE001 - raised below, after all envs are done
                out.append(None)
                first = first or e
        if first is not None:
            raise first
        return out

    def reset(self, *, seed: int | None = None, options: Sequence[Mapping[str, Any] | None] | None = None) -> tuple[list, list]:
        opts = list(options) if options is not None else [None] * self.num_envs
        if len(opts) != self.num_envs:
            raise ValueError(f"{len(opts)} options for {self.num_envs} envs")
        self._options = opts
        self._pending_reset = [False] * self.num_envs
        out = self._run(lambda i: self.envs[i].reset(seed=None if seed is None else seed + i, options=opts[i]))
        return [o for o, _ in out], [i for _, i in out]

    def _auto_options(self, i: int) -> Mapping[str, Any] | None:
        return self.reset_options(i) if callable(self.reset_options) else self._options[i]

    def _autoreset(self, i: int) -> tuple[Any, dict]:
        try:
            obs, info = self.envs[i].reset(options=self._auto_options(i))
        except GroveApiError as e:
            self._pending_reset[i] = True
            return None, {"env_error": {"status": e.status, "code": e.code, "message": e.message}, "autoreset": True}
        self._pending_reset[i] = False
        return obs, {**info, "autoreset": True}

    def _step_one(self, i: int, action: Any) -> tuple[Any, Any, bool, bool, dict]:
        env = self.envs[i]
        if self._pending_reset[i]:
            obs, info = self._autoreset(i)
            return obs, 0.0, False, obs is None, info
        try:
            obs, reward, term, trunc, info = env.step(action)
        except GroveApiError as e:
            env._ended = True
            obs, reward, term, trunc = env._last_obs, 0.0, False, True
            info = {"env_error": {"status": e.status, "code": e.code, "message": e.message}, "dropped": True}
        if not (term or trunc):
            return obs, reward, term, trunc, info
        if self.autoreset_mode == "next_step":
            self._pending_reset[i] = True
            return obs, reward, term, trunc, info
        new_obs, new_info = self._autoreset(i)
        return new_obs, reward, term, trunc, {**new_info, "final_obs": obs, "final_info": info}

    def step(self, actions: Sequence[Any]) -> tuple[list, list, list, list, list]:
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} envs")
        out = self._run(lambda i: self._step_one(i, actions[i]))
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
