"""Reading a JSON answer through the server's screenshot span header (no server needed)."""

import base64
import json

from grove_client._core import Answer, SCREENSHOT_SPAN_HEADER, _with_span, decode_json

B64 = base64.b64encode(bytes(range(256)) * 20).decode()
BODY = {"observation": {"title": "Ünïcødé \"base64\":\"", "screenshot": {"mime": "image/jpeg", "base64": B64, "width": 8}},
        "actions": [], "done": False}


def _wire(body: dict) -> tuple[bytes, int, int]:
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    start = raw.index(b'"base64":"' + B64[:20].encode()) + len(b'"base64":"')
    return raw, start, start + len(B64)


def test_span_gives_the_same_answer_as_a_full_parse():
    raw, start, end = _wire(BODY)
    got = decode_json(Answer(200, {SCREENSHOT_SPAN_HEADER: f"{start} {end}"}, raw))
    assert got == BODY
    # ... and it was read through the span, not by the fallback.
    assert _with_span(Answer(200, {SCREENSHOT_SPAN_HEADER: f"{start} {end}"}, raw)) == BODY
    # A bare observation (GET .../observation) too.
    raw, start, end = _wire(BODY["observation"])
    assert decode_json(Answer(200, {SCREENSHOT_SPAN_HEADER: f"{start} {end}"}, raw)) == BODY["observation"]


def test_a_span_that_does_not_check_out_parses_the_whole_body():
    raw, start, end = _wire(BODY)
    for span in [f"{start + 1} {end}", f"{start} {end - 1}", f"{start} {end + 10**9}", "x y", f"{end} {start}", ""]:
        assert _with_span(Answer(200, {SCREENSHOT_SPAN_HEADER: span}, raw)) is None
        assert decode_json(Answer(200, {SCREENSHOT_SPAN_HEADER: span}, raw)) == BODY
    pretty = json.dumps(BODY, indent=2).encode()
    assert decode_json(Answer(200, {SCREENSHOT_SPAN_HEADER: f"{start} {end}"}, pretty)) == BODY
