"""``BrowserEnv`` through full offline-site episodes (the server's built-in offline sites, judged by their rule
judge) with a scripted policy: reward 1 on success, 0 on a wrong answer; truncation at max steps; the
Orchard-GUI reward rules; the vectorised helper."""

import re

import pytest

import threading
import time

from grove_client import Client, GroveApiError, RetryPolicy
from grove_client.env import HAVE_GYMNASIUM, BrowserEnv, VectorBrowserEnv
from grove_client.errors import EpisodeEndedError
from grove_server import GroveServer

TASK = {"suite": "offline", "id": "Recipes--0"}  # "How long does the Lemon Garlic Roast Chicken take ... in minutes?"
DISH = "Lemon Garlic Roast Chicken"


def find(obs, pred):
    for el in obs["som"] or []:
        if pred(el):
            return el["label"]
    raise AssertionError(f"no such element among {[(e['tag'], e['text'][:30]) for e in obs['som'] or []]}")


def without_popups(env, obs):
    """The offline sites show interruptions (a newsletter modal, a cookie banner): dismiss them first."""
    for _ in range(3):
        btn = next((e["label"] for e in obs["som"] or [] if e["tag"] == "button" and e["text"].strip() in ("No thanks", "Accept", "Reject")), None)
        if btn is None:
            return obs
        obs, reward, term, trunc, _ = env.step({"action": "click_label", "label": btn})
        assert (reward, term, trunc) == (0.0, False, False)
    return obs


def scripted_episode(env, answer_of):
    """Search the dish, open it, read the total time, answer. Returns the last step's tuple."""
    obs, info = env.reset()
    assert info["sandbox_id"] and obs["url"].startswith("http://127.0.0.1")
    assert obs["screenshot"][:2] == b"\xff\xd8"
    obs = without_popups(env, obs)
    search = find(obs, lambda e: e["tag"] == "input")
    obs, reward, term, trunc, info = env.step({"action": "type_label", "label": search, "text": DISH, "clear": True, "submit": True})
    assert (reward, term, trunc) == (0.0, False, False)
    obs = without_popups(env, obs)
    link = find(obs, lambda e: e["tag"] == "a" and e["text"].strip() == DISH)
    obs, reward, term, trunc, info = env.step({"action": "click_label", "label": link})
    assert obs["title"].startswith(DISH)
    minutes = re.search(r"Total time (\d+) minutes", obs["accessibility"]).group(1)
    return env.step({"action": "answer", "text": answer_of(minutes)})


@pytest.fixture()
def env(server):
    e = BrowserEnv(server.url, server.api_key, task=TASK, som=True, sandbox={"accessibility": True}, max_steps=10)
    yield e
    e.close()


def test_env_is_a_gymnasium_env_when_gymnasium_is_installed():
    if HAVE_GYMNASIUM:
        import gymnasium

        assert issubclass(BrowserEnv, gymnasium.Env)
    else:
        assert BrowserEnv.__mro__[1] is object


def test_full_episode_reward_1_on_success(env, client):
    obs, reward, term, trunc, info = scripted_episode(env, lambda m: f"It takes {m} minutes in total.")
    assert (term, trunc) == (True, False)
    assert reward == 1.0 and type(reward) is float
    ev = info["evaluation"]
    assert ev["verdict"]["judge"] == "rule:offline" and ev["verdict"]["outcome"] == "success"
    assert ev["judge_error"] is None and ev["termination"]["reason"] == "task_completed"
    assert ev["steps"] >= 3 and ev["task_id"] == "Recipes--0"
    sid = env.sandbox_id
    assert client.get_sandbox(sid)["labels"]["task"] == "Recipes--0"
    env.close()
    assert client.get_sandbox(sid)["status"] == "closed"


def test_full_episode_reward_0_on_a_wrong_answer(env):
    obs, reward, term, trunc, info = scripted_episode(env, lambda m: f"It takes {int(m) + 7} minutes.")
    assert term and reward == 0.0 and type(reward) is float  # the rule judge's 0 is a float reward, as gymnasium's
    assert info["evaluation"]["verdict"]["outcome"] == "failure"
    assert "does not name" in info["evaluation"]["verdict"]["reasoning"]
    with pytest.raises(EpisodeEndedError, match="call reset"):
        env.step({"action": "wait", "ms": 10})  # the episode is over
    assert issubclass(EpisodeEndedError, RuntimeError)


def test_truncated_at_max_steps_and_reset_starts_a_fresh_episode(server):
    with BrowserEnv(server.url, server.api_key, task=TASK, max_steps=2) as env:
        env.reset()
        first = env.sandbox_id
        _, r, term, trunc, _ = env.step({"action": "scroll", "direction": "down", "amount": 2})
        assert (r, term, trunc) == (0.0, False, False)
        _, r, term, trunc, info = env.step({"action": "scroll", "direction": "up", "amount": 2})
        assert (term, trunc) == (False, True)
        # grove rules: the judge still scores the unanswered episode (no answer → failure, reward 0)
        assert r == 0 and info["termination"]["reason"] == "max_steps_exhausted"
        env.reset()
        assert env.sandbox_id != first
        assert env.client.get_sandbox(first)["status"] == "closed"


def test_orchard_gui_rules_parse_failures_score_minus_1(server):
    with BrowserEnv(server.url, server.api_key, task=TASK, reward_rules="orchard-gui", format="qwen3vl", max_steps=10) as env:
        env.reset()
        for i in range(3):
            _, r, term, trunc, info = env.step("I am not sure what to do")
            assert info["parse"]["ok"] is False
        assert (term, trunc) == (True, False)
        assert r == -1 and info["evaluation"]["verdict"] is None  # decided by the rules, no judge
        assert info["termination"]["reason"] == "consecutive_parse_failures"


def test_orchard_gui_rules_max_steps_score_0_without_judge(server):
    with BrowserEnv(server.url, server.api_key, task=TASK, reward_rules="orchard-gui", max_steps=1) as env:
        env.reset()
        _, r, term, trunc, info = env.step({"action": "wait", "ms": 10})
        assert trunc and r == 0 and info["evaluation"]["verdict"] is None and info["dropped"] is False


def test_llm_judged_task_without_a_judge_endpoint_is_a_judge_error_never_0(server, site):
    task = {"id": "inline-1", "suite": "webvoyager", "question": "Read the page title.", "start_url": site.url + "/page/hello"}
    for rules, dropped in (("grove", False), ("orchard-gui", True)):
        with BrowserEnv(server.url, server.api_key, task=task, reward_rules=rules, sandbox={"network": {"allow": [site.host_port]}}) as env:
            obs, _ = env.reset()
            assert obs["title"] == "hello"
            _, r, term, _, info = env.step({"action": "answer", "text": "hello"})
            assert term and r is None
            assert "--judge-url" in info["judge_error"] and info["dropped"] is dropped


def test_unknown_task_is_a_typed_error(server):
    with BrowserEnv(server.url, server.api_key, task={"suite": "offline", "id": "Nope--1"}) as env:
        with pytest.raises(GroveApiError) as e:
            env.reset()
        assert (e.value.status, e.value.code) == (404, "task_not_found")


def test_vector_env_runs_episodes_concurrently(server):
    with VectorBrowserEnv(3, server.url, server.api_key, max_steps=5, som=True) as venv:
        tasks = [{"task": {"suite": "offline", "id": i}} for i in ("Recipes--0", "Recipes--2", "Shop--0")]
        obs, infos = venv.reset(options=tasks)
        assert len({i["sandbox_id"] for i in infos}) == 3
        assert all(o["som"] for o in obs)
        obs, rewards, term, trunc, infos = venv.step([{"action": "answer", "text": "no idea"}] * 3)
        assert term == [True] * 3 and rewards == [0, 0, 0]
        assert [i["evaluation"]["task_id"] for i in infos] == ["Recipes--0", "Recipes--2", "Shop--0"]


def test_orchard_gui_rules_gate_a_judged_success_on_the_last_turns_format(server):
    """Orchard-GUI's recipe: a success counts only when the last turn closes </think> and holds a parsed <tool_call>."""
    done = '<tool_call>\n{"name": "done", "arguments": {"response": "It takes 95 minutes in total."}}\n</tool_call>'
    for text, reward, formats in ((f"The recipe page says 95 minutes.\n</think>\n\n{done}", 1, [1]), (done, 0, [0])):
        with BrowserEnv(server.url, server.api_key, task=TASK, reward_rules="orchard-gui", format="orchard", max_steps=5) as env:
            env.reset()
            _, r, term, trunc, info = env.step(text)
            assert info["parse"]["ok"] is True and (term, trunc) == (True, False)
            ev = info["evaluation"]
            assert ev["verdict"]["outcome"] == "success"  # the answer is right either way
            assert r == reward and ev["format_rewards"] == formats


def test_vector_env_resets_finished_envs_on_the_next_step(server):
    """gymnasium ≥ 1.0's next-step autoreset: the step after an env's episode ended starts its next episode
    (the action is ignored, reward 0.0, not done, info["autoreset"]); the other env steps on."""
    with VectorBrowserEnv(2, server.url, server.api_key, max_steps=5) as venv:
        _, infos = venv.reset(options=[{"task": TASK}, {"task": {"suite": "offline", "id": "Shop--0"}}])
        first = [i["sandbox_id"] for i in infos]
        _, rewards, term, trunc, infos = venv.step([{"action": "answer", "text": "no idea"}, {"action": "wait", "ms": 10}])
        assert term == [True, False] and trunc == [False, False] and rewards == [0.0, 0.0]
        obs, rewards, term, trunc, infos = venv.step([{"action": "wait", "ms": 10}] * 2)
        assert infos[0]["autoreset"] is True and infos[0]["task"] == TASK
        assert infos[0]["sandbox_id"] != first[0] and obs[0]["step"] == 0
        assert (rewards[0], term[0], trunc[0]) == (0.0, False, False)
        assert "autoreset" not in infos[1] and obs[1]["step"] == 2 and venv.envs[1].sandbox_id == first[1]
        assert venv.client.get_sandbox(first[0])["status"] == "closed"


def test_vector_env_same_step_autoreset_keeps_the_final_observation(server):
    with VectorBrowserEnv(2, server.url, server.api_key, max_steps=1, autoreset_mode="same_step",
                          reset_options=lambda i: {"task": {"suite": "offline", "id": "Recipes--2"}}) as venv:
        venv.reset(options=[{"task": TASK}] * 2)
        obs, rewards, term, trunc, infos = venv.step([{"action": "wait", "ms": 10}] * 2)
        assert trunc == [True, True] and rewards == [0.0, 0.0]
        for o, i in zip(obs, infos):
            assert o["step"] == 0 and i["final_obs"]["step"] == 1 and i["autoreset"] is True
            assert i["task"]["id"] == "Recipes--2" and i["final_info"]["termination"]["reason"] == "max_steps_exhausted"


def test_vector_env_an_env_whose_sandbox_is_lost_ends_alone(server):
    with VectorBrowserEnv(2, server.url, server.api_key, max_steps=5) as venv:
        venv.reset(options=[{"task": TASK}] * 2)
        lost = venv.envs[0].sandbox_id
        venv.client.delete_sandbox(lost)  # expired / deleted under the env
        _, rewards, term, trunc, infos = venv.step([{"action": "wait", "ms": 10}] * 2)
        assert (term, trunc) == ([False, False], [True, False])
        assert infos[0]["env_error"]["code"] == "sandbox_closed" and infos[0]["dropped"] is True
        obs, _, _, _, infos = venv.step([{"action": "wait", "ms": 10}] * 2)
        assert infos[0]["autoreset"] is True and venv.envs[0].sandbox_id != lost and obs[1]["step"] == 2


def test_a_start_refused_for_now_is_retried_with_backoff():
    """A start refused with a retryable status (here a full server's 503 capacity_exhausted, with the transport's
    own retries off) is tried again by reset() until a slot frees; a non-retryable error is raised at once."""
    srv = GroveServer("--max-sandboxes", "1")
    try:
        with Client(srv.url, srv.api_key, retry=RetryPolicy(max_retries=0)) as c:
            holder = c.create_sandbox("browser", start_url="about:blank")
            threading.Timer(2.0, lambda: c.delete_sandbox(holder["sandbox_id"])).start()
            env = BrowserEnv(client=c, task=TASK, start_backoff=0.5, start_retries=6)
            t0 = time.monotonic()
            obs, info = env.reset()
            assert time.monotonic() - t0 > 1.0 and obs["step"] == 0 and info["sandbox_id"] != holder["sandbox_id"]
            env.close()
            with pytest.raises(GroveApiError) as e:
                BrowserEnv(client=c, task={"suite": "offline", "id": "Nope--1"}, start_backoff=5).reset()
            assert e.value.status == 404 and not e.value.retryable
    finally:
        srv.stop()


@pytest.mark.skipif(not HAVE_GYMNASIUM, reason="gymnasium is not installed (pip install gymnasium)")
@pytest.mark.parametrize("screenshot,fmt", [("array", None), ("bytes", "qwen3vl")])
def test_gymnasium_check_env_passes(server, screenshot, fmt):
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make("grove/Browser-v0", base_url=server.url, api_key=server.api_key, task=TASK, max_steps=5,
                         screenshot=screenshot, format=fmt,
                         sandbox={"viewport": {"width": 640, "height": 480}, "screenshot_format": "png"})  # PNG: numpy decodes it
    try:
        check_env(env.unwrapped, skip_render_check=True)
        obs, _ = env.reset(seed=1)
        assert obs in env.observation_space
        if screenshot == "array":
            assert obs["screenshot"].shape == (480, 640, 3) and env.observation_space["screenshot"].shape == (480, 640, 3)
        action = env.action_space.sample()
        assert action in env.action_space
        obs, reward, term, trunc, _ = env.step(action)
        assert obs in env.observation_space and isinstance(reward, float)
    finally:
        env.close()


def test_orchard_gui_every_turn_format_gate_and_parse_failure_penalty(server):
    """Orchard-GUI's whole-trajectory samples: a judged success counts only when every model-text turn had the
    format (format_reward="every_turn"); its format_failure_penalty replaces the -1 of parse failures."""
    wait = '<tool_call>\n{"name": "wait", "arguments": {"seconds": 0}}\n</tool_call>'
    done = '<tool_call>\n{"name": "done", "arguments": {"response": "It takes 95 minutes in total."}}\n</tool_call>'
    for mode, reward in (("last_turn", 1.0), ("every_turn", 0.0)):
        with BrowserEnv(server.url, server.api_key, task=TASK, reward_rules="orchard-gui", format="orchard", max_steps=5) as env:
            env.reset(options={"episode": {"format_reward": mode}})
            env.step(wait)  # parsed, but no </think>: format 0
            _, r, term, _, info = env.step(f"The recipe says 95 minutes.\n</think>\n\n{done}")
            assert term and info["evaluation"]["verdict"]["outcome"] == "success"
            assert info["evaluation"]["format_rewards"] == [0, 1] and r == reward, mode
    with BrowserEnv(server.url, server.api_key, task=TASK, reward_rules="orchard-gui", format="qwen3vl", max_steps=5) as env:
        env.reset(options={"episode": {"format_failure_penalty": -0.5, "max_consecutive_parse_failures": 1}})
        _, r, term, _, info = env.step("no tool call here")
        assert term and r == -0.5 and info["termination"]["reason"] == "consecutive_parse_failures"
