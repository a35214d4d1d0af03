#!/usr/bin/env python3
"""A tiny bash-only agent harness (written for Grove's harness runs, in the style of mini-swe-agent).

It talks to an OpenAI-compatible server at $OPENAI_BASE_URL (with $OPENAI_API_KEY) using only the standard
library, so any HTTP proxy in $HTTP_PROXY is honoured. Each model reply must hold one ```bash block; the command
runs in the current directory, and the model sees its return code and output. The run ends when a command's
output starts with COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT (the rest is printed as the submission), or after
$HARNESS_MAX_STEPS steps. The task text comes from $GROVE_TASK or the first argument.
"""
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
BLOCK = re.compile(r"```(?:bash|sh)\s*\n(.*?)\n?```", re.S)


def chat(messages):
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    body = json.dumps({"model": os.environ.get("OPENAI_MODEL", "model"), "messages": messages}).encode()
    req = urllib.request.Request(base + "/chat/completions", data=body, method="POST", headers={
        "content-type": "application/json",
        "authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "none"),
    })
    with urllib.request.urlopen(req, timeout=float(os.environ.get("HARNESS_CALL_TIMEOUT", "300"))) as res:
        return json.load(res)["choices"][0]["message"].get("content") or ""


def main():
    task = os.environ.get("GROVE_TASK") or (sys.argv[1] if len(sys.argv) > 1 else "")
    if not task:
        print("no task: set GROVE_TASK or pass it as the first argument", file=sys.stderr)
        return 2
    max_steps = int(os.environ.get("HARNESS_MAX_STEPS", "20"))
    timeout = float(os.environ.get("HARNESS_COMMAND_TIMEOUT", "60"))
    messages = [
        {"role": "system", "content": "You work in a Linux shell. Answer with a short note and exactly one ```bash block. "
                                      f"When done, run: echo {SUBMIT} followed by your result."},
        {"role": "user", "content": task},
    ]
    for step in range(1, max_steps + 1):
        try:
            reply = chat(messages)
        except (urllib.error.URLError, OSError, ValueError, KeyError) as err:
            print(f"model call failed: {err}", file=sys.stderr)
            return 3
        messages.append({"role": "assistant", "content": reply})
        blocks = BLOCK.findall(reply)
        if len(blocks) != 1:
            messages.append({"role": "user", "content": "Reply with exactly one ```bash block."})
            continue
        try:
            run = subprocess.run(["bash", "-c", blocks[0]], capture_output=True, text=True, timeout=timeout)
            output, code = run.stdout + run.stderr, run.returncode
        except subprocess.TimeoutExpired as err:
            output, code = (err.stdout or "") if isinstance(err.stdout, str) else "", -1
        print(f"[step {step}] $ {blocks[0]} -> {code}", file=sys.stderr)
        lines = output.lstrip().splitlines()
        if code == 0 and lines and lines[0].strip() == SUBMIT:
            sys.stdout.write("\n".join(lines[1:]) + "\n")
            return 0
        messages.append({"role": "user", "content": f"<returncode>{code}</returncode>\n<output>\n{output[-8000:]}</output>"})
    print("step limit reached", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
