"""gymnasium spaces of ``BrowserEnv`` (imported only when gymnasium is installed: the package stays stdlib-only).

The observation is a ``Dict`` space: ``screenshot`` a ``Box`` (H, W, 3) uint8 with ``screenshot="array"``, else
``Bytes`` (PNG/JPEG bytes) or ``None`` with ``screenshot="none"``; ``url`` / ``title`` ``Text``; ``step`` a
``Discrete``; the structured parts (tabs, SoM list, accessibility text, scroll position, focused field, screenshot
metadata, the last action's error) ``JsonValue``. The action space is ``Text`` when the env takes model text
(``format=...``), else ``CanonicalAction``: a Grove action dict (or a list of them); its samples are valid,
harmless actions (a click, a scroll or a short wait) so gymnasium's checker and random-agent loops can step.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.spaces import Space

class AnyText(spaces.Text):
    """A string of at most ``max_length`` characters, any characters (a page title or URL can hold any); samples are
    alphanumeric, as ``Text``'s."""

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"AnyText({self.min_length}, {self.max_length})"


def text(max_length: int) -> AnyText:
    return AnyText(max_length=max_length, min_length=0)


class Bytes(Space):
    """Bytes of at most ``max_length`` (an encoded image); ``None`` is not in the space."""

    def __init__(self, max_length: int = 64 * 1024 * 1024, seed: int | None = None) -> None:
        self.max_length = max_length
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> bytes:
        return bytes(self.np_random.integers(0, 256, size=int(self.np_random.integers(0, 64)), dtype=np.uint8))

    def contains(self, x: Any) -> bool:
        return isinstance(x, (bytes, bytearray)) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"Bytes({self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Bytes) and other.max_length == self.max_length


_JSON_SCALARS = (type(None), bool, int, float, str)


def _is_json(x: Any, depth: int = 0) -> bool:
    if depth > 32:
        return False
    if isinstance(x, _JSON_SCALARS):
        return True
    if isinstance(x, (list, tuple)):
        return all(_is_json(v, depth + 1) for v in x)
    if isinstance(x, Mapping):
        return all(isinstance(k, str) and _is_json(v, depth + 1) for k, v in x.items())
    return False


class JsonValue(Space):
    """Any JSON value (None, bool, number, string, list, dict): the structured parts of an observation."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        return None

    def contains(self, x: Any) -> bool:
        return _is_json(x)

    def to_jsonable(self, sample_n: Sequence[Any]) -> list:
        return [json.loads(json.dumps(s)) for s in sample_n]

    def from_jsonable(self, sample_n: list) -> list:
        return list(sample_n)

    def __repr__(self) -> str:
        return "JsonValue()"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, JsonValue)


def _is_action(a: Any) -> bool:
    return isinstance(a, Mapping) and isinstance(a.get("action"), str) and _is_json(a)


class CanonicalAction(Space):
    """A Grove canonical action (``{"action": "click", "x": 500, "y": 300, "space": "rel1000"}``) or a list of
    them; the server validates the fields. ``sample()`` gives a click or a scroll at a random point on the
    0..1000 grid, or a 10 ms wait."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> dict:
        r = self.np_random
        kind = int(r.integers(0, 3))
        x, y = (int(v) for v in r.integers(0, 1000, size=2))
        if kind == 0:
            return {"action": "click", "x": x, "y": y, "space": "rel1000"}
        if kind == 1:
            return {"action": "scroll", "direction": ["up", "down"][int(r.integers(0, 2))], "amount": 1}
        return {"action": "wait", "ms": 10}

    def contains(self, x: Any) -> bool:
        if isinstance(x, (list, tuple)):
            return len(x) > 0 and all(_is_action(a) for a in x)
        return _is_action(x)

    def __repr__(self) -> str:
        return "CanonicalAction()"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, CanonicalAction)


def observation_space(screenshot: str, size: tuple[int, int] | None, max_steps: int | None) -> spaces.Dict:
    """``size``: (width, height) of the screenshot in ``"array"`` mode."""
    if screenshot == "array":
        w, h = size or (1280, 1000)
        shot: Space = spaces.Box(0, 255, shape=(h, w, 3), dtype=np.uint8)
    elif screenshot == "none":
        shot = JsonValue()  # always None
    else:
        shot = Bytes()
    return spaces.Dict(
        {
            "url": text(8192 * 4),
            "title": text(4096),
            "step": spaces.Discrete((max_steps or 10_000) + 1),
            "tabs": JsonValue(),
            "last_action_error": JsonValue(),
            "som": JsonValue(),
            "accessibility": JsonValue(),
            "scroll": JsonValue(),
            "focused": JsonValue(),
            "screenshot": shot,
            "screenshot_meta": JsonValue(),
        }
    )


def action_space(text_actions: bool) -> Space:
    return text(16384) if text_actions else CanonicalAction()
