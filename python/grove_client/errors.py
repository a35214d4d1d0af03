"""Errors raised by the Grove clients."""

from __future__ import annotations

#: HTTP status of each error code a sandbox can end in while it is created (``protocol/errors.ts``, the server's
#: catalog; ``tests/test_client.py`` checks this table against it). A creation failure is reported inside the
#: sandbox info (``status: "error"``), not as an HTTP answer, so the client gives it the status the catalog does.
CREATION_ERROR_STATUS = {
    "browser_start_timeout": 503,
    "capacity_exhausted": 503,
    "overloaded": 503,
    "shutting_down": 503,
    "pod_unschedulable": 503,
    "image_pull_failed": 502,
    "pod_start_timeout": 504,
    "worker_lost": 502,
    "start_url_failed": 502,
    "service_start_failed": 503,
    "browser_crashed": 500,
    "internal_error": 500,
}

#: Statuses that mean "not now": nothing was done, the same request may be sent again later.
RETRYABLE_STATUSES = (429, 503)


class GroveApiError(Exception):
    """A non-2xx answer of the Grove API (or no answer at all).

    ``status`` is the HTTP status (0 when the request never got an answer), ``code`` the server's stable
    error code (``protocol/errors.ts``: ``sandbox_not_found``, ``capacity_exhausted``, ...) or
    ``network_error`` / ``bad_response``, ``message`` the server's message, ``retry_after`` the seconds
    of a ``Retry-After`` header (503/429), else None. ``retryable`` is true for 503/429: try again later.
    """

    def __init__(self, status: int, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{code} ({status}): {message}" if status else f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.status in RETRYABLE_STATUSES

    def __reduce__(self):  # picklable across multiprocessing
        return (type(self), (self.status, self.code, self.message, self.retry_after))


class SandboxFailedError(GroveApiError):
    """The sandbox ended in status ``error`` while being created. ``code`` is its error code and ``status`` the
    HTTP status the server's catalog gives that code (``browser_start_timeout``: 503, retryable: create again
    later; ``start_url_failed``: 502)."""

    @classmethod
    def of(cls, error: dict | None) -> "SandboxFailedError":
        err = error or {}
        code = str(err.get("code", "sandbox_failed"))
        return cls(CREATION_ERROR_STATUS.get(code, 500), code, str(err.get("message", "sandbox creation failed")))


class EpisodeEndedError(RuntimeError):
    """``BrowserEnv.step`` after the episode was terminated or truncated: call ``reset()`` first (gymnasium's
    contract; a ``RuntimeError`` as before, now a type of its own to catch)."""


class CaptureTimeoutError(GroveApiError):
    """``503 capture_timeout``: the screenshot of a step or observation could not be captured within its deadline
    (an overloaded machine). The server never answers an observation without the screenshot that was asked for.

    For a step the actions **did run** (``executed`` true; ``details["actions"]`` are the resolved actions, with
    ``done``, ``answer``, ``step``, ``url``): never send the step again (it would act twice) — wait ``retry_after``
    seconds and read ``observation()``. The clients never retry a step that answered this; an observation (a read)
    is retried like any 503.
    """

    def __init__(self, status: int, code: str, message: str, retry_after: float | None = None, details: dict | None = None) -> None:
        super().__init__(status, code, message, retry_after)
        self.details = details or {}

    @property
    def executed(self) -> bool:
        return bool(self.details.get("executed"))

    @property
    def retryable(self) -> bool:
        """Only what did not run may be sent again (an observation); a step that ran must not."""
        return not self.executed

    def __reduce__(self):
        return (type(self), (self.status, self.code, self.message, self.retry_after, self.details))


#: Former name (an observation without its screenshot is now this explicit error).
MissingScreenshotError = CaptureTimeoutError
