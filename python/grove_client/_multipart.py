"""Reader of Grove's ``multipart/mixed`` answers (``screenshot: "binary"``): a JSON part, then the image bytes.

Parts carry ``Content-Length`` (Grove always sends it), so image bytes are sliced, never scanned; a part
without it ends at the next delimiter (RFC 2046).
"""

from __future__ import annotations

import re

_BOUNDARY = re.compile(r'boundary="?([^";]+)"?', re.I)
_LENGTH = re.compile(rb"^content-length:\s*(\d+)\s*$", re.I | re.M)
_TYPE = re.compile(rb"^content-type:\s*(.+?)\s*$", re.I | re.M)


def parse_multipart(body: bytes, content_type: str) -> list[tuple[str, bytes]]:
    """Splits a multipart body into ``(content type, bytes)`` parts."""
    m = _BOUNDARY.search(content_type)
    if not m:
        raise ValueError("multipart answer without a boundary")
    delim = b"--" + m.group(1).encode("latin-1")
    parts: list[tuple[str, bytes]] = []
    view = memoryview(body)
    at = body.find(delim)
    if at < 0:
        raise ValueError("no multipart delimiter in the answer")
    while True:
        at += len(delim)
        if body[at : at + 2] == b"--":
            return parts
        head_end = body.find(b"\r\n\r\n", at)
        if head_end < 0:
            raise ValueError("a multipart part has no header end")
        headers = body[at:head_end]
        start = head_end + 4
        length = _LENGTH.search(headers)
        if length:
            end = start + int(length.group(1))
            at = body.find(delim, end)
        else:
            at = body.find(delim, start)
            end = at - 2  # the CRLF before a delimiter belongs to it
        if at < 0 or end > len(body):
            raise ValueError("a multipart part is cut short")
        ctype = _TYPE.search(headers)
        parts.append(((ctype.group(1).decode("latin-1") if ctype else "text/plain"), bytes(view[start:end])))
