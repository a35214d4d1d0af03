"""Sync transport: one keep-alive ``http.client`` connection per thread, retries of 503/429."""

from __future__ import annotations

import http.client
import ssl
import threading
import time

from ._core import Answer, Endpoint, Request, RetryPolicy, error_of, may_retry
from .errors import GroveApiError

# A reused keep-alive connection the server closed meanwhile fails with one of these before any answer.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.CannotSendRequest)


class SyncTransport:
    def __init__(self, endpoint: Endpoint, retry: RetryPolicy) -> None:
        self.endpoint = endpoint
        self.retry = retry
        self._local = threading.local()
        self._all: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _conn(self, timeout: float) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            e = self.endpoint
            if e.scheme == "https":
                conn = http.client.HTTPSConnection(e.host, e.port, timeout=timeout, context=ssl.create_default_context())
            else:
                conn = http.client.HTTPConnection(e.host, e.port, timeout=timeout)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        else:
            conn.timeout = timeout
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _once(self, req: Request) -> Answer:
        for attempt in (0, 1):
            conn = self._conn(req.timeout)
            reused = conn.sock is not None
            try:
                conn.request(req.method, req.path, body=req.body, headers=req.headers)
                resp = conn.getresponse()
                body = resp.read()
                headers = {k.lower(): v for k, v in resp.getheaders()}
                if resp.will_close:
                    self._drop()
                return Answer(resp.status, headers, body)
            except _STALE as e:
                self._drop()
                if reused and attempt == 0:
                    continue  # the server closed an idle connection: send again on a fresh one
                raise GroveApiError(0, "network_error", f"{req.method} {req.path}: {e!r}") from None
            except (OSError, http.client.HTTPException) as e:
                self._drop()
                raise GroveApiError(0, "network_error", f"{req.method} {req.path}: {e!r}") from None
        raise AssertionError("unreachable")

    def send(self, req: Request) -> Answer:
        """Sends ``req``; 2xx answers are returned, others raise GroveApiError (after retries of 503/429)."""
        attempt = 0
        while True:
            ans = self._once(req)
            if 200 <= ans.status < 300:
                return ans
            err = error_of(ans)
            if may_retry(req, err) and attempt < self.retry.max_retries:
                time.sleep(self.retry.delay(attempt, err.retry_after))
                attempt += 1
                continue
            raise err

    def close(self) -> None:
        with self._lock:
            conns, self._all = self._all, []
        for c in conns:
            c.close()
        self._local = threading.local()
