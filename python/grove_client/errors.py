"""Errors raised by the Grove clients."""

from __future__ import annotations


class GroveApiError(Exception):
    """A non-2xx answer of the Grove API (or no answer at all).

    ``status`` is the HTTP status (0 when the request never got an answer), ``code`` the server's stable
    error code (``protocol/errors.ts``: ``sandbox_not_found``, ``capacity_exhausted``, ...) or
    ``network_error`` / ``bad_response``, ``message`` the server's message, ``retry_after`` the seconds
    of a ``Retry-After`` header (503/429), else None.
    """

    def __init__(self, status: int, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{code} ({status}): {message}" if status else f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after

    def __reduce__(self):  # picklable across multiprocessing
        return (GroveApiError, (self.status, self.code, self.message, self.retry_after))


class SandboxFailedError(GroveApiError):
    """The sandbox ended in status ``error`` while being created (``code`` is its error code)."""
