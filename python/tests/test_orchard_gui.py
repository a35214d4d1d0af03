"""Orchard-GUI's env-server protocol served on Grove's sandboxes, driven by our own client speaking it as the
published remote client does: 16 concurrent episodes through one server, each env its own base URL, never mixing."""

import re
import threading

import pytest
from orchard_gui_client import EnvServerError, RemoteWebEnv

ENV_CONFIG = {"width": 640, "height": 480, "dpr": 1, "max_retries": 2, "wait_timeout": 10000,
              "resize_output_coords": True, "resize_scale": 1000, "image_patch_size": 32}
TOOLS = [{"type": "function", "function": {"name": "click"}}]


def env_url(server, name: str) -> str:
    return f"{server.url}/orchard-gui/{server.api_key}/{name}"


def center_on_grid(el: dict, scale: float = 1000) -> list[float]:
    x1, y1, x2, y2 = el["bbox"]
    return [round((x1 + x2) / 2 * scale), round((y1 + y2) / 2 * scale)]


def episode(server, site, name: str, config: dict, results: dict) -> None:
    env = RemoteWebEnv(env_url(server, name))
    assert env.health()["initialized"] is False
    env.initialize(f"task-{name}", {"start_url": f"{site.url}/page/{name}"}, config, TOOLS, "orchard")
    obs, info = env.reset()
    seen = [obs["active_tab_url"]]
    assert obs["screenshot"][:8] == b"\x89PNG\r\n\x1a\n"
    assert obs["screen_size"] == [config["width"], config["height"]]
    assert info["tool_list"] == TOOLS and info["policy"] == "orchard" and info["tool_response"] == []
    h = env.health()
    assert (h["initialized"], h["task_id"], h["locked"]) == (True, f"task-{name}", False) and h["idle_secs"] >= 0
    link = next((e for e in obs["a11ytree"] if e["tag"] == "a"), None)
    assert link is not None, (obs["a11ytree"], obs["active_tab_url"], obs["all_tab_url"])
    if config.get("resize_output_coords", True):
        point = center_on_grid(link, config["resize_scale"])
    else:  # screen pixels
        point = [round((link["bbox"][0] + link["bbox"][2]) / 2 * config["width"]), round((link["bbox"][1] + link["bbox"][3]) / 2 * config["height"])]
    for attempt in range(3):
        obs, reward, term, trunc, info = env.step([{"name": "click", "args": {"point_2d": point}}])
        # On an overloaded machine a page can miss its deadline ("did not respond", "settle"): the feedback says
        # so and the agent tries again, as a policy would. Anything else is a real failure.
        if not info["tool_responses"][0]["tool_response"].startswith("Failed") or attempt == 2:
            break
        assert re.search(r"did not respond|settle after|timed? ?out", info["tool_responses"][0]["tool_response"]), info
    seen.append(obs["active_tab_url"])
    assert (reward, term, trunc) == (0.0, False, False)
    [resp] = info["tool_responses"]
    assert resp["tool_name"] == "click" and resp["tool_response"].startswith("Succeed: `click`")
    assert f"navigated to {site.url}/page/{name}-next" in resp["tool_response"]
    obs, reward, term, trunc, info = env.step([{"name": "scroll", "args": {"direction": "down", "amount": 0.5}},
                                                {"name": "done", "args": {"response": f"finished {name}"}}])
    seen.append(obs["active_tab_url"])
    assert term is True and trunc is False
    assert [r["tool_name"] for r in info["tool_responses"]] == ["scroll", "done"]
    assert info["tool_responses"][1]["tool_response"] == f"Succeed: task marked as done. Response: finished {name}"
    assert obs["all_tab_url"][0]["title"] == f"{name}-next" and obs["all_tab_url"][0]["active"] is True
    env.exit()
    assert env.health()["initialized"] is False
    results[name] = seen


def test_sixteen_concurrent_episodes_never_mix(server, site):
    results: dict = {}
    errors: list = []

    def run(i: int) -> None:
        try:
            cfg = ENV_CONFIG if i % 2 == 0 else {**ENV_CONFIG, "resize_output_coords": False}
            episode(server, site, f"env{i}", cfg, results)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((i, e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    for i in range(16):
        base = f"{site.url}/page/env{i}"
        assert results[f"env{i}"] == [base, base + "-next", base + "-next"]


def test_protocol_errors_as_the_original_answers_them(server, site):
    env = RemoteWebEnv(env_url(server, "errs"))
    with pytest.raises(EnvServerError) as e:
        env.step([{"name": "wait", "args": {"seconds": 0}}])
    assert e.value.status == 400 and "call /reset first" in e.value.text
    env.initialize("t", {"start_url": f"{site.url}/page/errs"}, ENV_CONFIG)
    try:
        with pytest.raises(EnvServerError) as e:
            env.initialize("t", {"start_url": f"{site.url}/page/errs"}, ENV_CONFIG)
        assert e.value.status == 400 and "Env already exists" in e.value.text
        # a bad call is feedback, not an HTTP error; the next call still runs
        obs, _, term, _, info = env.step([{"name": "fly", "args": {}}, {"name": "go_back", "args": {}}])
        assert info["tool_responses"][0]["tool_response"] == "Error: Action fly is not supported by the environment!"
        assert info["tool_responses"][1]["tool_name"] == "go_back"
        assert term is False
    finally:
        env.exit()
    with pytest.raises(EnvServerError) as e:
        RemoteWebEnv(f"{server.url}/orchard-gui/wrong-key/errs").health()
    assert e.value.status == 403
    # an unreachable start page fails /reset with the original's 500 and leaves no sandbox behind
    with pytest.raises(EnvServerError) as e:
        env.initialize("t2", {"start_url": "http://127.0.0.1:9/"}, ENV_CONFIG)
    assert e.value.status == 500 and "Failed to navigate" in e.value.text
    assert env.health()["initialized"] is False


def test_max_steps_truncates_when_asked(server, site):
    env = RemoteWebEnv(env_url(server, "trunc"))
    env.initialize("t", {"start_url": f"{site.url}/page/trunc"}, {**ENV_CONFIG, "max_steps": 2})
    try:
        assert env.step([{"name": "wait", "args": {"seconds": 0}}])[3] is False
        assert env.step([{"name": "wait", "args": {"seconds": 0}}])[3] is True
    finally:
        env.exit()


def test_a_scroll_that_moves_nothing_is_noted_as_the_boundary(server, site):
    """web_env.py notes a page scroll whose position did not change; a page shorter than the viewport cannot scroll."""
    env = RemoteWebEnv(env_url(server, "edge"))
    env.initialize("t", {"start_url": f"{site.url}/page/edge"}, ENV_CONFIG)
    try:
        env.reset()
        *_, info = env.step([{"name": "scroll", "args": {"direction": "down", "amount": 0.5}}])
        [resp] = info["tool_responses"]
        assert resp["tool_response"].startswith("Succeed: `scroll`"), resp
        assert "Note: the page did not scroll" in resp["tool_response"], resp
    finally:
        env.exit()
