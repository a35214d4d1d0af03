"""A client of Orchard-GUI's env-server protocol, written by us from its published client
(MSR-Orchard/slime examples/orchard_gui/env/clients/remote_env.py): the same requests and the same reading of
the answers (POST /reset, /step, /exit with JSON; GET /health; the screenshot base64-decoded; any non-200 an
error). Standard library only, so the tests need no aiohttp."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from typing import Any


class EnvServerError(RuntimeError):
    def __init__(self, status: int, path: str, text: str) -> None:
        super().__init__(f"Browser env server error [{status}] {path}: {text}")
        self.status = status
        self.text = text


class RemoteWebEnv:
    """Mirrors RemoteWebEnv: initialize() (= POST /reset), reset() (the cached reset answer), step(), exit()."""

    def __init__(self, server_url: str, env_id: int = 0) -> None:
        self.server_url = server_url.rstrip("/")
        self.env_id = env_id
        self._cached_reset: tuple[dict, dict] | None = None

    def _post(self, path: str, payload: dict) -> dict:
        req = urllib.request.Request(self.server_url + path, data=json.dumps(payload).encode(),
                                     headers={"content-type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=300) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            raise EnvServerError(e.code, path, e.read().decode()) from None

    def health(self) -> dict:
        try:
            with urllib.request.urlopen(self.server_url + "/health", timeout=60) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            raise EnvServerError(e.code, "/health", e.read().decode()) from None

    @staticmethod
    def _decode(obs: dict) -> dict:
        v = obs.get("screenshot")
        obs["screenshot"] = base64.b64decode(v) if isinstance(v, str) else b""
        return obs

    def initialize(self, task_id: str, task_data: dict, env_config: dict, tool_list: list | None = None, policy: str = "") -> None:
        data = self._post("/reset", {"task_id": task_id, "task_data": task_data, "env_config": env_config,
                                     "tool_list": tool_list or [], "policy": policy})
        self._cached_reset = (self._decode(data["observation"]), data["info"])

    def reset(self) -> tuple[dict, dict]:
        if self._cached_reset is None:
            raise RuntimeError("reset() called without a prior initialize()")
        r, self._cached_reset = self._cached_reset, None
        return r

    def step(self, action_list: list[dict[str, Any]]) -> tuple[dict, float, bool, bool, dict]:
        data = self._post("/step", {"env_id": self.env_id, "actions": action_list})
        return self._decode(data["observation"]), data["reward"], data["terminated"], data["truncated"], data["info"]

    def exit(self) -> None:
        self._post("/exit", {"env_id": self.env_id})
