"""grove_client: Python client of the Grove environment service (standard library only).

- ``Client`` / ``AsyncClient``: one method per REST route, keep-alive, retries of 503/429 (Retry-After).
- ``client.sandbox(...)``: a context manager that always deletes its sandbox.
- ``grove_client.env.BrowserEnv``: a gymnasium-style environment with rewards from the task's judge.
"""

from ._core import RetryPolicy, screenshot_bytes
from .aio import AsyncClient, AsyncSandbox
from .client import DEFAULT_URL, Client, Sandbox
from .errors import CaptureTimeoutError, EpisodeEndedError, GroveApiError, SandboxFailedError
from .images import to_array

__version__ = "0.1.0"

__all__ = [
    "AsyncClient", "AsyncSandbox", "CaptureTimeoutError", "Client", "EpisodeEndedError", "DEFAULT_URL", "GroveApiError", "RetryPolicy", "Sandbox",
    "SandboxFailedError", "screenshot_bytes", "to_array", "__version__",
]
