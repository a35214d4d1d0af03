"""The asyncio client against a live server: concurrency over pooled keep-alive connections, binary
screenshots, typed errors, the async context manager on cancellation."""

import asyncio

import pytest

from grove_client import AsyncClient, GroveApiError, screenshot_bytes

CLICK = {"action": "click", "x": 100, "y": 50, "space": "css_px"}


def run(coro):
    return asyncio.run(coro)


def test_async_lifecycle_and_concurrent_sandboxes(server, browser_opts):
    async def main():
        async with AsyncClient(server.url, server.api_key) as c:
            assert (await c.health())["status"] == "ok"

            async def episode(n: int) -> tuple[str, str]:
                async with c.sandbox(**browser_opts, labels={"n": str(n)}) as sb:
                    for _ in range(n + 1):
                        r = await sb.step(CLICK, screenshot="binary")
                    assert r["observation"]["screenshot"]["bytes"][:2] == b"\xff\xd8"
                    return sb.id, r["observation"]["title"]

            results = await asyncio.gather(*(episode(n) for n in range(4)))
            # each sandbox counted its own clicks: no mixing between concurrent episodes
            assert [t for _, t in results] == [f"clicks {n + 1}" for n in range(4)]
            for sid, _ in results:
                assert (await c.get_sandbox(sid))["status"] == "closed"
            # the pool kept connections alive for reuse
            assert len(c._t._idle) >= 1

    run(main())


def test_async_errors_observation_and_screenshot(server, browser_opts):
    async def main():
        async with AsyncClient(server.url, server.api_key) as c:
            with pytest.raises(GroveApiError) as e:
                await c.get_sandbox("sb_nope")
            assert (e.value.status, e.value.code) == (404, "sandbox_not_found")
            async with c.sandbox(**browser_opts) as sb:
                obs = await sb.observation()
                assert screenshot_bytes(obs)[:2] == b"\xff\xd8"
                assert (await sb.screenshot())[:2] == b"\xff\xd8"
                with pytest.raises(GroveApiError) as e:
                    await sb.step({"action": "fly"})
                assert e.value.code == "invalid_action"
                infos = await c.list_sandboxes(label={"nobody": "x"})
                assert infos == []

    run(main())


def test_async_sandbox_deleted_when_the_task_is_cancelled(server, browser_opts):
    seen = {}

    async def main():
        async with AsyncClient(server.url, server.api_key) as c:
            started = asyncio.Event()

            async def worker():
                async with c.sandbox(**browser_opts) as sb:
                    seen["id"] = sb.id
                    started.set()
                    await asyncio.sleep(60)

            t = asyncio.create_task(worker())
            await started.wait()
            t.cancel()  # what Ctrl-C does to the main task under asyncio.run
            with pytest.raises(asyncio.CancelledError):
                await t
            assert (await c.get_sandbox(seen["id"]))["status"] == "closed"

    run(main())


def test_async_heartbeat_task(server, browser_opts):
    async def main():
        async with AsyncClient(server.url, server.api_key) as c:
            async with c.sandbox(**browser_opts, idle_timeout_seconds=2, heartbeat_interval=0.3) as sb:
                await asyncio.sleep(4)
                assert (await c.get_sandbox(sb.id))["status"] == "ready"

    run(main())


def test_a_stale_kept_alive_socket_is_retried_on_a_fresh_connection():
    """A peer that closes its kept-alive connections shortly after answering (as any HTTP server does after its
    keep-alive timeout): every idle socket of the pool is stale at once. The request that meets one is sent again
    on a new connection, not on the next idle socket (stale too: 'network_error: connection lost')."""
    opened = []

    async def main():
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            opened.append(writer)
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    if not head:
                        return
                    await asyncio.sleep(0.1)  # concurrent requests each open their own connection
                    body = b'{"status":"ok","version":"stub","uptime_s":0,"sandboxes":0}'
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
                    await writer.drain()
                    await asyncio.sleep(0.05)
                    writer.close()  # idle timeout: closed without a `connection: close` header
                    return
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()

        srv = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = srv.sockets[0].getsockname()[1]
        try:
            async with AsyncClient(f"http://127.0.0.1:{port}", "k" * 8) as c:
                await asyncio.gather(*(c.health() for _ in range(3)))
                assert len(c._t._idle) == 3
                await asyncio.sleep(0.3)  # the peer has closed all three
                assert (await c.health())["status"] == "ok"
                assert len(opened) == 4  # one fresh connection, not a second stale one
        finally:
            srv.close()
            await srv.wait_closed()

    run(main())
