"""``Sandbox``: one sandbox of a sync ``Client`` as a context manager. It waits until the sandbox is ready, can keep
it alive with a heartbeat thread, and always deletes it on exit (also on KeyboardInterrupt)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Mapping

from .errors import GroveApiError

if TYPE_CHECKING:
    from .client import Client


class Sandbox:
    """One sandbox, bound to its client. Use as ``with client.sandbox(start_url=...) as sb: sb.step(...)``."""

    def __init__(self, client: "Client", type: str, options: Mapping[str, Any], ready_timeout: float,
                 heartbeat_interval: float | None) -> None:
        self.client = client
        self.type = type
        self.options = dict(options)
        self.ready_timeout = ready_timeout
        self.heartbeat_interval = heartbeat_interval
        self.id: str | None = None
        self.info: dict | None = None
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    @classmethod
    def attach(cls, client: "Client", sandbox_id: str) -> "Sandbox":
        sb = cls(client, "browser", {}, 0, None)
        sb.id = sandbox_id
        return sb

    def open(self) -> "Sandbox":
        info = self.client.create_sandbox(self.type, **self.options)
        self.id = info["sandbox_id"]
        try:
            self.info = self.client.wait_ready(self.id, self.ready_timeout)
            if self.heartbeat_interval:
                self._beat = threading.Thread(target=self._heartbeat_loop, name=f"grove-heartbeat-{self.id}", daemon=True)
                self._beat.start()
        except BaseException:
            self.close()
            raise
        return self

    def _heartbeat_loop(self) -> None:
        assert self.heartbeat_interval
        while not self._stop.wait(self.heartbeat_interval):
            try:
                self.client.heartbeat(self.id)  # type: ignore[arg-type]
            except GroveApiError as e:
                if e.code in ("sandbox_closed", "sandbox_not_found"):
                    return

    def close(self) -> None:
        """Deletes the sandbox. A KeyboardInterrupt during the delete does not stop it: the delete is sent again
        once, then the interrupt goes on."""
        self._stop.set()
        if self.id is None:
            return
        interrupted: BaseException | None = None
        for _ in range(2):
            try:
                self.client.delete_sandbox(self.id)
                break
            except KeyboardInterrupt as e:
                interrupted = e
            except GroveApiError:
                break
        if self._beat is not None and self._beat is not threading.current_thread():
            self._beat.join(timeout=5)
        self.id = None
        if interrupted is not None:
            raise interrupted

    def __enter__(self) -> "Sandbox":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- per-sandbox calls ------------------------------------------------------------------------------------
    def _sid(self) -> str:
        if self.id is None:
            raise RuntimeError("the sandbox is not open")
        return self.id

    def step(self, action: Mapping[str, Any] | None = None, **kw: Any) -> dict:
        return self.client.step(self._sid(), action, **kw)

    def observation(self, **kw: Any) -> dict:
        return self.client.observation(self._sid(), **kw)

    def screenshot(self) -> bytes:
        return self.client.screenshot(self._sid())

    def screenshot_array(self) -> Any:
        return self.client.screenshot_array(self._sid())

    def evaluate(self, **kw: Any) -> dict:
        return self.client.evaluate(self._sid(), **kw)

    def heartbeat(self) -> dict:
        return self.client.heartbeat(self._sid())

    def get(self) -> dict:
        return self.client.get_sandbox(self._sid())
