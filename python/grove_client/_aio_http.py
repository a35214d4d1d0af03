"""asyncio transport: HTTP/1.1 over asyncio streams with a pool of keep-alive connections (standard library
only), retries of 503/429 honouring Retry-After."""

from __future__ import annotations

import asyncio
import ssl
from collections import deque

from ._core import Answer, Endpoint, Request, RetryPolicy, error_of, may_retry
from .errors import GroveApiError


class _Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.used = False

    def close(self) -> None:
        self.writer.close()


class _Stale(Exception):
    """A reused connection the server had closed: nothing was answered, so the request may be sent again."""


class AsyncTransport:
    def __init__(self, endpoint: Endpoint, retry: RetryPolicy, max_idle: int = 64) -> None:
        self.endpoint = endpoint
        self.retry = retry
        self.max_idle = max_idle
        self._idle: deque[_Conn] = deque()
        self._closed = False

    async def _open(self) -> _Conn:
        e = self.endpoint
        ctx = ssl.create_default_context() if e.scheme == "https" else None
        reader, writer = await asyncio.open_connection(e.host, e.port, ssl=ctx, limit=2**24)
        return _Conn(reader, writer)

    async def _exchange(self, conn: _Conn, req: Request) -> tuple[Answer, bool]:
        e = self.endpoint
        head = [f"{req.method} {req.path} HTTP/1.1", f"host: {e.host}:{e.port}"]
        head += [f"{k}: {v}" for k, v in req.headers.items()]
        head.append(f"content-length: {len(req.body) if req.body is not None else 0}")
        conn.writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (req.body or b""))
        await conn.writer.drain()
        status_line = await conn.reader.readline()
        if not status_line:
            raise _Stale()
        parts = status_line.decode("latin-1").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/"):
            raise GroveApiError(0, "bad_response", f"not an HTTP answer: {status_line[:100]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        while True:
            line = await conn.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            k, _, v = line.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        keep = headers.get("connection", "").lower() != "close"
        if req.method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            body = b""
        elif "content-length" in headers:
            body = await conn.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int((await conn.reader.readline()).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while (await conn.reader.readline()) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(await conn.reader.readexactly(size))
                await conn.reader.readexactly(2)
            body = b"".join(chunks)
        else:
            body = await conn.reader.read()
            keep = False
        return Answer(status, headers, body), keep

    async def _once(self, req: Request) -> Answer:
        for attempt in (0, 1):
            # A request sent again after a stale socket goes on a fresh connection: the other idle sockets were
            # kept alive as long as that one and may have been closed by the server too.
            conn = self._idle.pop() if self._idle and attempt == 0 else await self._open_checked(req)
            reused = conn.used
            conn.used = True
            try:
                ans, keep = await asyncio.wait_for(self._exchange(conn, req), req.timeout)
            except (_Stale, ConnectionResetError, BrokenPipeError, asyncio.IncompleteReadError) as err:
                conn.close()
                if reused and attempt == 0:
                    continue
                raise GroveApiError(0, "network_error", f"{req.method} {req.path}: connection lost ({err!r})") from None
            except asyncio.TimeoutError:
                conn.close()
                raise GroveApiError(0, "timeout", f"{req.method} {req.path}: no answer within {req.timeout} s") from None
            except BaseException:
                # Cancelled (or anything else) mid-exchange: the connection's state is unknown; never reuse it.
                conn.close()
                raise
            if keep and not self._closed and len(self._idle) < self.max_idle:
                self._idle.append(conn)
            else:
                conn.close()
            return ans
        raise AssertionError("unreachable")

    async def _open_checked(self, req: Request) -> _Conn:
        try:
            return await asyncio.wait_for(self._open(), req.timeout)
        except (OSError, asyncio.TimeoutError) as e:
            raise GroveApiError(0, "network_error", f"{req.method} {req.path}: cannot connect to {self.endpoint.base_url} ({e!r})") from None

    async def send(self, req: Request) -> Answer:
        attempt = 0
        while True:
            ans = await self._once(req)
            if 200 <= ans.status < 300:
                return ans
            err = error_of(ans)
            if may_retry(req, err) and attempt < self.retry.max_retries:
                await asyncio.sleep(self.retry.delay(attempt, err.retry_after))
                attempt += 1
                continue
            raise err

    async def close(self) -> None:
        self._closed = True
        while self._idle:
            c = self._idle.pop()
            c.close()
            try:
                await c.writer.wait_closed()
            except OSError:
                pass
