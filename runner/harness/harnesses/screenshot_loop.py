#!/usr/bin/env python3
"""A tiny screenshot-loop browser harness (written for Grove's harness runs).

Each turn it takes the browser's observation ($GROVE_BROWSER_URL/observation, Bearer $GROVE_BROWSER_TOKEN), sends
the screenshot and the task to the model at $OPENAI_BASE_URL (OpenAI chat completions, image as a data URL), and
hands the model's raw reply to the browser's step with the policy format $HARNESS_FORMAT (default qwen3vl): Grove
parses it server side. It stops when the step answer says the episode terminated, after an answer, or after
$HARNESS_MAX_STEPS turns. Standard library only, so $HTTP_PROXY is honoured.
"""
import json
import os
import sys
import urllib.request


def call(url, body=None, headers=None, timeout=300):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                 headers={"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=timeout) as res:
        return json.load(res)


def main():
    task = os.environ.get("GROVE_TASK") or (sys.argv[1] if len(sys.argv) > 1 else "")
    browser = os.environ["GROVE_BROWSER_URL"].rstrip("/")
    auth = {"authorization": "Bearer " + os.environ["GROVE_BROWSER_TOKEN"]}
    model_url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
    model_auth = {"authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "none")}
    fmt = os.environ.get("HARNESS_FORMAT", "qwen3vl")
    obs = call(browser + "/observation", headers=auth)
    for turn in range(1, int(os.environ.get("HARNESS_MAX_STEPS", "15")) + 1):
        shot = obs.get("screenshot") or {}
        image = "data:%s;base64,%s" % (shot.get("mime", "image/jpeg"), shot.get("base64", ""))
        messages = [
            {"role": "system", "content": "You operate a web browser. Answer with one tool call."},
            {"role": "user", "content": [{"type": "text", "text": "Task: %s\nURL: %s" % (task, obs.get("url", ""))},
                                         {"type": "image_url", "image_url": {"url": image}}]},
        ]
        reply = call(model_url, {"model": os.environ.get("OPENAI_MODEL", "model"), "messages": messages}, model_auth)
        text = reply["choices"][0]["message"].get("content") or ""
        result = call(browser + "/step", {"model_output": text, "format": fmt}, auth)
        print("[turn %d] %s -> %s" % (turn, text.strip()[:120], result.get("url", "")), file=sys.stderr)
        obs = result.get("observation") or result
        if result.get("terminated") or result.get("answer") is not None:
            print(result.get("answer") or "")
            return 0
    print("turn limit reached", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
