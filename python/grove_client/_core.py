"""What the sync and asyncio clients share: request building, answer decoding, the retry rule."""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass
from typing import Any, Iterable, Mapping
from urllib.parse import quote, urlencode, urlsplit

from ._multipart import parse_multipart
from ._routes import BY_ID
from .errors import CaptureTimeoutError, GroveApiError

USER_AGENT = "grove-client-python/0.1.0"
#: Answers that mean "not now": the server did no work, so any request may be sent again.
RETRY_STATUSES = (429, 503)


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # with query string
    body: bytes | None
    headers: dict[str, str]
    timeout: float


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Mapping[str, str]  # lower-case names
    body: bytes


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of 503/429 answers. ``Retry-After`` is honoured (capped at ``max_delay``)."""

    max_retries: int = 5
    base_delay: float = 0.25
    max_delay: float = 10.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay)
        return min(self.base_delay * (2**attempt), self.max_delay) * (0.5 + random.random() / 2)


class Endpoint:
    """Base URL, API key and defaults of one server."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float) -> None:
        u = urlsplit(base_url.rstrip("/"))
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"base_url must be http(s)://host[:port][/prefix], got {base_url!r}")
        self.scheme = u.scheme
        self.host = u.hostname
        self.port = u.port or (443 if u.scheme == "https" else 80)
        self.prefix = u.path.rstrip("/")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout

    def request(
        self,
        name: str,
        path_params: Mapping[str, str] | None = None,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        timeout: float | None = None,
        accept: str = "application/json",
    ) -> Request:
        route = BY_ID[name]
        path = route.path
        for k, v in (path_params or {}).items():
            path = path.replace("{" + k + "}", quote(str(v), safe=""))
        pairs: list[tuple[str, str]] = []
        for k, v in (query or {}).items():
            if v is None:
                continue
            for item in v if isinstance(v, (list, tuple)) else [v]:
                pairs.append((k, ("true" if item else "false") if isinstance(item, bool) else str(item)))
        if pairs:
            path += "?" + urlencode(pairs)
        headers = {"accept": accept, "user-agent": USER_AGENT}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        data: bytes | None = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["content-type"] = "application/json"
        # A bodiless POST/DELETE sends no content type: an empty JSON body is not valid JSON.
        return Request(route.method, self.prefix + path, data, headers, timeout if timeout is not None else self.timeout)


def drop_none(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def check_fields(name: str, given: Iterable[str], allowed: Iterable[str]) -> None:
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise TypeError(f"{name}: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(allowed))}")


def _retry_after(headers: Mapping[str, str]) -> float | None:
    v = headers.get("retry-after")
    if v is None:
        return None
    try:
        return float(v)
    except ValueError:
        return None


def error_of(answer: Answer) -> GroveApiError:
    """The typed error of a non-2xx answer (Grove bodies are ``{"error": {"code", "message", "details"?}}``)."""
    code, message = f"http_{answer.status}", answer.body[:500].decode("utf-8", "replace") or f"HTTP {answer.status}"
    details = None
    try:
        err = json.loads(answer.body)["error"]
        code, message = str(err["code"]), str(err["message"])
        details = err.get("details") if isinstance(err.get("details"), dict) else None
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    if code == "capture_timeout":
        return CaptureTimeoutError(answer.status, code, message, _retry_after(answer.headers), details)
    return GroveApiError(answer.status, code, message, _retry_after(answer.headers))


def may_retry(req: Request, err: GroveApiError) -> bool:
    """A 503/429 is sent again — except a step (any non-GET) whose capture timed out: its actions ran already."""
    if err.status not in RETRY_STATUSES:
        return False
    return not (err.code == "capture_timeout" and req.method != "GET")


def decode_json(answer: Answer) -> Any:
    """The JSON body of a 2xx answer; a multipart (``screenshot: "binary"``) answer gets its image spliced in as
    ``screenshot["bytes"]`` of the observation."""
    ctype = answer.headers.get("content-type", "")
    if ctype.startswith("multipart/"):
        try:
            parts = parse_multipart(answer.body, ctype)
            result = json.loads(parts[0][1])
        except (ValueError, IndexError) as e:
            raise GroveApiError(answer.status, "bad_response", f"unreadable multipart answer: {e}") from None
        obs = result.get("observation", result)
        if len(parts) > 1 and isinstance(obs.get("screenshot"), dict):
            obs["screenshot"]["bytes"] = parts[1][1]
        return result
    if not answer.body:
        return None
    try:
        spliced = _with_span(answer)
        return spliced if spliced is not None else json.loads(answer.body)
    except ValueError as e:
        raise GroveApiError(answer.status, "bad_response", f"answer is not JSON: {e}") from None


SCREENSHOT_SPAN_HEADER = "grove-screenshot-span"
_KEY = b'"base64":"'


def _with_span(answer: Answer) -> Any:
    """A step/observation answer parsed without scanning its screenshot: the server names the byte range of the
    base64 (header ``grove-screenshot-span: <start> <end>``), which is copied out; only the rest is parsed.
    None when there is no span or it does not check out (the caller parses the whole body)."""
    span = answer.headers.get(SCREENSHOT_SPAN_HEADER)
    if not span:
        return None
    try:
        start, end = (int(x) for x in span.split(" "))
    except ValueError:
        return None
    body = answer.body
    if start < len(_KEY) or end < start or end >= len(body) or body[end] != 0x22 or body[start - len(_KEY):start] != _KEY:
        return None
    result = json.loads(body[:start] + body[end:])
    shot = result.get("observation", result).get("screenshot") if isinstance(result, dict) else None
    if not isinstance(shot, dict) or shot.get("base64") != "":
        return None
    shot["base64"] = body[start:end].decode("ascii")
    return result


def screenshot_bytes(obs_or_step: Mapping[str, Any]) -> bytes | None:
    """The screenshot of an observation (or step answer) as bytes, from either wire form."""
    obs = obs_or_step.get("observation", obs_or_step)
    shot = obs.get("screenshot") if isinstance(obs, Mapping) else None
    if not shot:
        return None
    if shot.get("bytes") is not None:
        return shot["bytes"]
    if shot.get("base64"):
        return base64.b64decode(shot["base64"])
    return None


def require_screenshot(result: Any, screenshot: str | None, what: str, executed: bool) -> Any:
    """A step or observation answer that asked for a screenshot (anything but ``"none"``) carries one — else it is
    503 ``capture_timeout``, raised here as the server raises it (an older server answered without one)."""
    obs = result.get("observation", result) if isinstance(result, Mapping) else None
    if screenshot != "none" and isinstance(obs, Mapping) and screenshot_bytes(obs) is None:
        raise CaptureTimeoutError(503, "capture_timeout", f"{what}: the answer has no screenshot", None,
                                  {"executed": executed, "step": obs.get("step"), "url": obs.get("url")})
    return result
