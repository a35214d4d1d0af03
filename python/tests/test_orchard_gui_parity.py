"""One Orchard-GUI episode through every tool of its published tool list, compared field by field and feedback line
by feedback line with what its env server (MSR-Orchard/slime examples/orchard_gui/env/web_env.py) returns for the
same calls on the same page. The expected values are written here from its published behaviour: the fixed forms
verbatim; where Grove words a note itself (same fact, our prose) the expectation checks the fact."""

import re
import struct

import pytest
from orchard_gui_client import RemoteWebEnv

# 1000 × 500 screen at dpr 1, grid 1000: x on the grid is CSS x, y on the grid is twice CSS y.
CONFIG = {"width": 1000, "height": 500, "dpr": 1, "max_retries": 2, "wait_timeout": 10000,
          "resize_output_coords": True, "resize_scale": 1000, "image_patch_size": 32}
TOOLS = [{"type": "function", "function": {"name": n}} for n in
         ("click", "write", "press_keys", "scroll", "wait", "done", "goto_url", "go_back", "drag", "hover", "new_tab",
          "switch_tab", "close_tab")]
START = "Start to execute actions...."


def at(css_x: float, css_y: float) -> list:
    return [css_x, css_y * 2]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def call(name: str, **args) -> dict:
    return {"name": name, "args": args}


@pytest.fixture()
def env(server, site, request):
    e = RemoteWebEnv(f"{server.url}/orchard-gui/{server.api_key}/{request.node.name[:40]}")
    yield e
    if e.health()["initialized"]:
        e.exit()


def check_observation(obs: dict, url: str, tabs: list[tuple[str, bool]], config: dict = CONFIG) -> None:
    assert set(obs) == {"screenshot", "a11ytree", "screen_size", "all_tab_url", "active_tab_url"}
    assert png_size(obs["screenshot"]) == (config["width"], config["height"])
    assert obs["screen_size"] == [config["width"], config["height"]]
    assert obs["active_tab_url"] == url
    assert [(t["index"], t["url"], t["active"]) for t in obs["all_tab_url"]] == [(i, u, a) for i, (u, a) in enumerate(tabs)]
    for el in obs["a11ytree"]:
        assert {"tag", "textContent", "bbox"} <= set(el) and len(el["bbox"]) == 4
        assert all(0 <= v <= 1 for v in el["bbox"])


def step(env: RemoteWebEnv, *calls: dict):
    obs, reward, term, trunc, info = env.step(list(calls))
    assert reward == 0.0 and trunc is False
    assert set(info) == {"tool_list", "policy", "env_message", "tool_responses"} and info["tool_list"] == TOOLS
    assert [r["tool_name"] for r in info["tool_responses"]] == [c["name"] for c in calls]
    return obs, term, info["env_message"], [r["tool_response"] for r in info["tool_responses"]]


def test_an_episode_through_every_tool_answers_as_web_env(env, site):
    og = f"{site.url}/og"
    env.initialize("parity", {"start_url": og}, CONFIG, TOOLS, "orchard")
    obs, info = env.reset()
    assert info == {"tool_list": TOOLS, "policy": "orchard", "env_message": "Browser environment reset successfully.", "tool_response": []}
    check_observation(obs, og, [(og, True)])
    assert [(e["tag"], e["textContent"]) for e in obs["a11ytree"]] == [
        ("a", "Next page"), ("input", "Search recipes"), ("button", "Add item"), ("a", "Open tab")]
    assert obs["a11ytree"][0]["bbox"] == [0, 0, 0.2, 0.08]

    # click the field, then type into it (the page upper-cases it: web_env notes the value differs)
    obs, term, msg, [r] = step(env, call("click", point_2d=at(100, 80)))
    assert (term, msg) == (False, START)
    assert r == 'Succeed: `click` on <input> "Search recipes" at (100, 80) executed.' + " Note: the click changed neither the URL nor the tabs."
    obs, term, msg, [r] = step(env, call("write", message="pasta"))
    assert msg == START
    assert r.startswith('Succeed: `write` typed "pasta" into <input> "Search recipes".')
    assert re.search(r'Note: the field now holds "PASTA", not the typed text', r), r

    # hover, then a click that adds an element: the env message's DOM-change line names it
    obs, term, msg, [h, c] = step(env, call("hover", point_2d=at(100, 20)), call("click", point_2d=at(100, 140)))
    assert h == 'Succeed: `hover` on <a> "Next page" at (100, 20) executed.'
    assert c == 'Succeed: `click` on <button> "Add item" at (100, 140) executed. Note: the click changed neither the URL nor the tabs.'
    assert msg == f"{START} DOM changes: 1 element(s) appeared [<button> 'Added']."

    # scroll: direction and share; the second scroll up meets the top (web_env's boundary note, our words)
    obs, term, msg, rs = step(env, call("scroll", direction="down", amount=0.5), call("scroll", direction="up", amount=1),
                              call("scroll", direction="up", amount=1))
    assert rs[:2] == ["Succeed: `scroll` down by 50% executed.", "Succeed: `scroll` up by 100% executed."]
    assert rs[2].startswith("Succeed: `scroll` up by 100% executed. Note: the page did not scroll"), rs[2]
    assert msg == START

    # keys: the valid ones pressed and listed; none valid is a failure; wait says its seconds
    obs, term, msg, rs = step(env, call("press_keys", keys=["ctrl", "a", "bogus"]), call("press_keys", keys=["bogus"]),
                              call("wait", seconds=1))
    assert rs == ["Succeed: `press_keys` ['Control', 'a'] executed.", "Failed: no valid keys found in ['bogus'].",
                  "Succeed: waited 1 seconds."]

    # the only tab cannot be closed: refused, the page stays
    obs, term, msg, [r] = step(env, call("close_tab"))
    assert r.startswith("Failed: `close_tab` cannot close the only tab"), r
    check_observation(obs, og, [(og, True)])

    # a link opening a tab: navigated to the popup (web_env follows it), tab 1; its elements replace the page's
    popup = f"{site.url}/page/popup"
    obs, term, msg, [r] = step(env, call("click", point_2d=at(100, 200)))
    assert r == f'Succeed: `click` on <a> "Open tab" at (100, 200) executed. Page navigated to {popup}. New tab opened (tab 1).'
    check_observation(obs, popup, [(og, False), (popup, True)])
    assert msg == (f"{START} DOM changes: 1 element(s) appeared [<a> 'next']; 5 element(s) disappeared "
                   "[<a> 'Next page', <input> 'Search recipes', <button> 'Add item', <a> 'Open tab', <button> 'Added'].")

    # tab tools report tab indices; out of range is refused with the range
    obs, term, msg, rs = step(env, call("switch_tab", tab_index=5), call("switch_tab", tab_index=0), call("new_tab"),
                              call("close_tab"))
    assert rs == ["Failed: `switch_tab` tab_index 5 out of range (0-1).", f"Succeed: `switch_tab` switched to tab 0 ({og}).",
                  "Succeed: `new_tab` opened blank tab (tab 2).", "Succeed: `close_tab` closed tab 2, now on tab 1."]
    check_observation(obs, popup, [(og, False), (popup, True)])

    # navigation tools; an unknown tool and a call without its point are feedback, the next call still runs
    x = f"{site.url}/page/x"
    obs, term, msg, rs = step(env, call("goto_url", url=x), call("go_back"), call("fly"), call("click"),
                              call("drag", start_point_2d=at(10, 10), end_point_2d=at(50, 50)))
    assert rs[:3] == [f"Succeed: `goto_url` navigated to {x}.", "Succeed: `go_back` executed.",
                      "Error: Action fly is not supported by the environment!"]
    assert rs[3].startswith("Failed: `click`") and "point_2d" in rs[3]
    assert rs[4] == "Succeed: `drag` executed."
    check_observation(obs, popup, [(og, False), (popup, True)])

    obs, term, msg, [r] = step(env, call("done", response="finished"))
    assert term is True and r == "Succeed: task marked as done. Response: finished"


def test_dpr_2_screenshots_have_the_screen_size(env, site):
    cfg = {**CONFIG, "width": 1280, "height": 1000, "dpr": 2}
    env.initialize("dpr2", {"start_url": f"{site.url}/og"}, cfg, TOOLS, "orchard")
    obs, _ = env.reset()
    check_observation(obs, f"{site.url}/og", [(f"{site.url}/og", True)], cfg)
    # the page lays out at 640 × 500 CSS px: the link's box is a share of that
    assert obs["a11ytree"][0]["bbox"] == [0, 0, 200 / 640, 40 / 500]
    # a click at screen px (model grid 1000 → css = x / dpr / 1000 * 1280) lands on the link: CSS (100, 20)
    obs, _, _, [r] = step(env, call("click", point_2d=[156.25, 40]))
    assert r.startswith('Succeed: `click` on <a> "Next page" at (100, 20) executed. Page navigated to'), r
    assert png_size(obs["screenshot"]) == (1280, 1000)
