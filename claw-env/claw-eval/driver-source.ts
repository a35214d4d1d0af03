// The Python driver Grove writes to a temp folder at run time (Grove's own code, not Claw-Eval's): it imports the
// user's checkout (DIR/src/claw_eval, DIR/mock_services, DIR/tasks/<id>/grader.py) and runs one of
//   probe DIR            stdin: {"tasks":[{"id","files":[...]}]} → stdout: {"<id>": "<first missing module>" | null}
//   supervise DIR SPEC   runs each service of SPEC ({"services":[{"name","script","uds","env"}]}) as `serve`
//   serve DIR SCRIPT UDS loads SCRIPT's FastAPI `app` (without its __main__ block) and serves it on a Unix socket
//   grade DIR YAML IN OUT  the task's own grader over the trace in IN; scores from the checkout's compute_task_score
//   user_turn DIR IN OUT   the checkout's simulated user (runner/user_agent.py UserAgent): its reply, or null when done;
//                          with "relay", its client's chat calls go to Grove's model client (as the judge's do)
//   sandbox_tools DIR      the checkout's sandbox tool specs (runner/sandbox_tools.py SANDBOX_TOOLS) as JSON on stdout
//   prompt DIR YAML OUT    the first user message as the checkout's loop builds it (runner/loop.py
//                          _build_initial_user_content: attachments and media named in the prompt, loaded from DIR by
//                          its media_loader under its default model/media config) and the media_load events it wrote
// Everything the graders print goes to stderr; answers are JSON files or stdout only.
export const DRIVER_PY = String.raw`
import ast, importlib.util, inspect, json, os, subprocess, sys, time, traceback

def setup(root):
    os.chdir(root)
    for p in (root, os.path.join(root, "src")):
        if p not in sys.path:
            sys.path.insert(0, p)

def imports_of(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    out = []
    def walk(nodes):
        for n in nodes:
            if isinstance(n, ast.Import):
                out.extend(a.name.split(".")[0] for a in n.names)
            elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
                out.append(n.module.split(".")[0])
            elif isinstance(n, (ast.If, ast.Try, ast.With)):
                walk(getattr(n, "body", []) + getattr(n, "orelse", []) + getattr(n, "finalbody", []))
                for h in getattr(n, "handlers", []):
                    walk(h.body)
    walk(tree.body)
    return out

def probe(root):
    setup(root)
    req = json.load(sys.stdin)
    std = set(sys.stdlib_module_names)
    cache = {}
    result = {}
    for t in req["tasks"]:
        missing = None
        for f in t["files"]:
            p = os.path.join(root, f)
            if not os.path.exists(p):
                continue
            for m in imports_of(p):
                if m in std or m == "__future__":
                    continue
                if m not in cache:
                    local = os.path.exists(os.path.join(root, m)) or os.path.exists(os.path.join(root, "src", m)) or os.path.exists(os.path.join(os.path.dirname(p), m + ".py"))
                    cache[m] = local or importlib.util.find_spec(m) is not None
                if not cache[m]:
                    missing = m
                    break
            if missing:
                break
        result[t["id"]] = missing
    json.dump(result, sys.stdout)

def serve(root, script, uds):
    setup(root)
    sys.stdout = sys.stderr
    path = os.path.join(root, script)
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("claw_eval_service", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["claw_eval_service"] = mod
    spec.loader.exec_module(mod)
    app = getattr(mod, "app", None)
    if app is None:
        print("no FastAPI app in " + script, file=sys.stderr)
        sys.exit(3)
    import uvicorn
    uvicorn.run(app, uds=uds, log_level="warning", access_log=False)

def supervise(root, spec_path):
    spec = json.load(open(spec_path))
    procs = []
    for s in spec["services"]:
        env = dict(s["env"])
        procs.append(subprocess.Popen([sys.executable, __file__, "serve", root, s["script"], s["uds"]], env=env, stdin=subprocess.DEVNULL))
    while True:
        for s, p in zip(spec["services"], procs):
            if p.poll() is not None:
                print("service %s exited (rc=%s)" % (s["name"], p.returncode), file=sys.stderr)
                for q in procs:
                    if q.poll() is None:
                        q.kill()
                sys.exit(4)
        time.sleep(0.2)

class _Msg:
    def __init__(self, content):
        self.content = content
        self.role = "assistant"

class _Choice:
    def __init__(self, content):
        self.message = _Msg(content)
        self.index = 0
        self.finish_reason = "stop"

class _Resp:
    def __init__(self, content):
        self.choices = [_Choice(content)]

class _Relay:
    """client.chat.completions.create(...) over the driver's stdout/stdin: one JSON line each way."""
    def __init__(self, out):
        self._out = out
        self.chat = self
        self.completions = self

    def create(self, **kw):
        body = {k: kw[k] for k in ("model", "messages", "temperature", "max_tokens") if k in kw}
        self._out.write(json.dumps({"relay_request": body}) + "\n")
        self._out.flush()
        line = sys.stdin.readline()
        if not line:
            raise ConnectionError("Grove closed the judge relay")
        ans = json.loads(line)
        if "error" in ans:
            raise ConnectionError(ans["error"])
        return _Resp(ans["content"])

def grade(root, yaml_path, in_path, out_path):
    setup(root)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    req = json.load(open(in_path))
    try:
        from claw_eval.models.task import TaskDefinition
        from claw_eval.models.trace import TraceMessage, ToolDispatch
        from claw_eval.models.message import Message
        from claw_eval.models.scoring import compute_task_score, is_pass
        from claw_eval.graders.registry import get_grader
        task = TaskDefinition.from_yaml(yaml_path)
        tid = req.get("trace_id", "grove")
        messages = [TraceMessage(trace_id=tid, message=Message.model_validate(m)) for m in req["messages"]]
        dispatches = [ToolDispatch(trace_id=tid, **d) for d in req["dispatches"]]
        judge = None
        j = req.get("judge")
        if j:
            from claw_eval.graders.llm_judge import LLMJudge
            judge = LLMJudge(model_id=j["model"], api_key=j.get("api_key") or "relay", base_url=j.get("base_url") or "http://grove-judge-relay.invalid/v1")
            if j.get("relay"):
                # every chat call of the judge (LLMJudge's and graders' own judge.client calls) goes to Grove's judge client
                judge.client = _Relay(real_stdout)
        tasks_dir = os.path.dirname(os.path.dirname(yaml_path))
        grader = get_grader(task.task_id, tasks_dir=tasks_dir, task_dir=os.path.dirname(yaml_path))
        if hasattr(judge, "reset_call_log"):
            judge.reset_call_log()
        params = inspect.signature(grader.grade).parameters
        kwargs = {"audit_data": req.get("audit_data") or {}, "judge": judge}
        if "media_events" in params:
            from claw_eval.models.trace import MediaLoad
            kwargs["media_events"] = [MediaLoad(trace_id=tid, **e) for e in req.get("media_events") or []]
        if "env_snapshot" in params and req.get("env_snapshot") is not None:
            kwargs["env_snapshot"] = req["env_snapshot"]
        scores = grader.grade(messages, dispatches, task, **kwargs)
        score = compute_task_score(scores)
        calls = judge.get_call_log() if hasattr(judge, "get_call_log") else []
        out = {"scores": scores.model_dump(), "task_score": score, "passed": bool(is_pass(score)), "judge_calls": len(calls)}
    except Exception as exc:
        retryable = type(exc).__name__ in ("APIConnectionError", "APITimeoutError", "InternalServerError", "ConnectionError")
        out = {"error": "%s: %s" % (type(exc).__name__, exc), "retryable": retryable, "trace": traceback.format_exc()[-2000:]}
    json.dump(out, open(out_path, "w"))
    real_stdout.flush()

def user_turn(root, in_path, out_path):
    setup(root)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    req = json.load(open(in_path))
    try:
        from claw_eval.models.message import Message
        from claw_eval.runner.user_agent import UserAgent
        m = req["model"]
        ua = UserAgent(model_id=m["model"], api_key=m.get("api_key") or "relay", base_url=m.get("base_url") or "http://grove-user-relay.invalid/v1")
        if m.get("relay"):
            # the simulated user's chat calls (UserAgent.client.chat.completions.create) go to Grove's model client
            ua.client = _Relay(real_stdout)
        text = ua.generate_response(persona=req["persona"], conversation_messages=[Message.model_validate(x) for x in req["messages"]])
        out = {"text": text}
    except Exception as exc:
        out = {"error": "%s: %s" % (type(exc).__name__, exc)}
    json.dump(out, open(out_path, "w"))
    real_stdout.flush()

def sandbox_tools(root):
    setup(root)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    from claw_eval.runner.sandbox_tools import SANDBOX_TOOLS
    json.dump([{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in SANDBOX_TOOLS], real_stdout)

class _Collect:
    def __init__(self):
        self.events = []
    def write_event(self, ev):
        self.events.append(ev)

def prompt(root, yaml_path, out_path):
    setup(root)
    sys.stdout = sys.stderr
    from claw_eval.models.task import TaskDefinition
    task = TaskDefinition.from_yaml(yaml_path)
    try:
        from claw_eval.runner.loop import _build_initial_user_content
    except ImportError:
        # a checkout without its agent loop: the prompt's text alone, no media
        json.dump({"content": [{"type": "text", "text": task.prompt.text}], "media_events": []}, open(out_path, "w"))
        return
    w = _Collect()
    blocks = _build_initial_user_content(task, trace_id="grove", writer=w, model_cfg=None, media_cfg=None)
    events = [{k: v for k, v in e.model_dump().items() if k not in ("type", "trace_id", "timestamp")} for e in w.events]
    json.dump({"content": [b.model_dump() for b in blocks], "media_events": events}, open(out_path, "w"))

if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"probe": probe, "serve": serve, "supervise": supervise, "grade": grade, "user_turn": user_turn, "sandbox_tools": sandbox_tools, "prompt": prompt}[cmd](*args)
`;
