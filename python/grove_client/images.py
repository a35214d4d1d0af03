"""Screenshots as arrays: ``to_array(bytes)`` → ``numpy.ndarray`` (H, W, 3) uint8.

Uses Pillow when it is importable (any format). Without Pillow, PNG is decoded here with zlib and numpy
(Grove sandboxes can capture PNG: ``screenshot_format="png"``); JPEG/WebP then need Pillow.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any


def have_numpy() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def have_pillow() -> bool:
    try:
        import PIL.Image  # noqa: F401
    except ImportError:
        return False
    return True


def to_pil(data: bytes) -> Any:
    """A ``PIL.Image.Image`` of the bytes (needs Pillow)."""
    import io

    from PIL import Image

    img = Image.open(io.BytesIO(data))
    img.load()
    return img


def to_array(data: bytes) -> Any:
    """The image as a numpy array (H, W, 3), uint8 RGB."""
    import numpy as np

    if have_pillow():
        return np.asarray(to_pil(data).convert("RGB"))
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return _png_to_array(data)
    raise RuntimeError("decoding this image format needs Pillow (pip install Pillow); PNG works without it")


def _png_to_array(data: bytes) -> Any:
    import numpy as np

    pos, idat, width = 8, [], 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            if depth != 8 or color not in (2, 6) or interlace:
                raise RuntimeError("only 8-bit RGB/RGBA non-interlaced PNG decodes without Pillow")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat.append(chunk)
        elif kind == b"IEND":
            break
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8)
    stride = width * channels
    rows = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.int32)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        ftype, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        if ftype == 0:
            cur = line
        elif ftype == 2:
            cur = (line + prev) & 0xFF
        else:  # Sub, Average, Paeth depend on the pixel to the left: per pixel
            cur = np.zeros(stride, dtype=np.int32)
            for x in range(stride):
                a = cur[x - channels] if x >= channels else 0
                b = prev[x]
                c = prev[x - channels] if x >= channels else 0
                if ftype == 1:
                    p = a
                elif ftype == 3:
                    p = (a + b) >> 1
                else:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[x] = (line[x] + p) & 0xFF
        out[y] = cur
        prev = cur
    return out.astype(np.uint8).reshape(height, width, channels)[:, :, :3]
