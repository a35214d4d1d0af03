"""The Python side of `npm run bench:python`: N concurrent envs × S steps through grove_client, timed from the
first step to the last (sandbox creation is not timed). Prints one JSON line: {client, screenshot, steps, seconds}."""

import argparse
import asyncio
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from grove_client import AsyncClient, Client, GroveApiError  # noqa: E402

START_TRIES = 5


def start(c: Client, body: dict) -> str:
    """A ready sandbox; a start refused for now (browser_start_timeout / overloaded: 503) is tried again."""
    for attempt in range(START_TRIES):
        sid = c.create_sandbox(**body)["sandbox_id"]
        try:
            c.wait_ready(sid, 120)
            return sid
        except GroveApiError as e:
            c.delete_sandbox(sid)
            if not e.retryable or attempt == START_TRIES - 1:
                raise
            time.sleep(2 ** attempt)
    raise AssertionError("unreachable")


async def start_async(c: AsyncClient, body: dict) -> str:
    for attempt in range(START_TRIES):
        sid = (await c.create_sandbox(**body))["sandbox_id"]
        try:
            await c.wait_ready(sid, 120)
            return sid
        except GroveApiError as e:
            await c.delete_sandbox(sid)
            if not e.retryable or attempt == START_TRIES - 1:
                raise
            await asyncio.sleep(2 ** attempt)
    raise AssertionError("unreachable")


def action(i: int) -> dict:
    return {"action": "click", "x": 60 + (i % 8) * 150, "y": 40 + ((i // 8) % 6) * 64, "space": "css_px"}


def run_threads(a) -> float:
    mode = "binary" if a.screenshot == "binary" else None
    with Client(a.url, a.key) as c:
        ids = [start(c, a.body) for _ in range(a.envs)]
        go = threading.Barrier(a.envs + 1)
        errors: list = []
        missing: list = []
        failed: list = []

        def worker(sid: str) -> None:
            go.wait()
            try:
                for i in range(a.steps):
                    try:
                        r = c.step(sid, action(i), screenshot=mode)
                    except GroveApiError as e:  # a 5xx on an overloaded machine: counted, the env goes on
                        if e.status < 500:
                            raise
                        failed.append(e)
                        continue
                    shot = r["observation"].get("screenshot") or {}
                    if not (shot.get("bytes") or shot.get("base64")):
                        missing.append(sid)  # a capture that failed on a loaded machine: counted, not fatal
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(sid,)) for sid in ids]
        for t in threads:
            t.start()
        go.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        took = time.perf_counter() - t0
        if errors:
            raise errors[0]
        return took, len(missing) + len(failed)


async def run_async(a) -> float:
    mode = "binary" if a.screenshot == "binary" else None
    async with AsyncClient(a.url, a.key) as c:
        ids = [await start_async(c, a.body) for _ in range(a.envs)]

        missing: list = []

        async def worker(sid: str) -> None:
            for i in range(a.steps):
                try:
                    r = await c.step(sid, action(i), screenshot=mode)
                except GroveApiError as e:
                    if e.status < 500:
                        raise
                    missing.append(sid)
                    continue
                shot = r["observation"].get("screenshot") or {}
                if not (shot.get("bytes") or shot.get("base64")):
                    missing.append(sid)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker(s) for s in ids))
        return time.perf_counter() - t0, len(missing)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--body", required=True, help="sandbox options as JSON")
    p.add_argument("--envs", type=int, default=16)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--screenshot", choices=["json", "binary"], default="json")
    p.add_argument("--client", choices=["threads", "async"], default="threads")
    a = p.parse_args()
    a.body = json.loads(a.body)
    seconds, missing = run_threads(a) if a.client == "threads" else asyncio.run(run_async(a))
    print(json.dumps({"client": a.client, "screenshot": a.screenshot, "steps": a.envs * a.steps, "seconds": seconds,
                      "missing_screenshots": missing}))


if __name__ == "__main__":
    main()
