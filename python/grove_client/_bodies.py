"""The request bodies and queries both clients (``Client``, ``AsyncClient``) send: checked against the routes' known
fields here, so the sync and the async client cannot drift apart."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ._core import check_fields, drop_none
from ._routes import BROWSER_OPTIONS, CLAW_OPTIONS, SHELL_OPTIONS


def label_query(labels: Mapping[str, str] | Iterable[str] | None) -> list[str] | None:
    if labels is None:
        return None
    if isinstance(labels, Mapping):
        return [f"{k}={v}" for k, v in labels.items()]
    return list(labels)


def creation_body(type: str, options: Mapping[str, Any]) -> dict[str, Any]:
    known = {"browser": BROWSER_OPTIONS, "shell": SHELL_OPTIONS, "claw": CLAW_OPTIONS}.get(type, ())
    check_fields("create_sandbox", options, known)
    return {"type": type, **drop_none(options)}


def step_body(action, actions, model_output, format, screenshot, som, accessibility, som_overlay) -> dict[str, Any]:
    given = [k for k, v in (("action", action), ("actions", actions), ("model_output", model_output)) if v is not None]
    if len(given) != 1:
        raise TypeError(f"step: give exactly one of action, actions or model_output (got {', '.join(given) or 'none'})")
    return drop_none(
        {
            "action": action, "actions": actions, "model_output": model_output, "format": format,
            "screenshot": screenshot, "som": som, "accessibility": accessibility, "som_overlay": som_overlay,
        }
    )
