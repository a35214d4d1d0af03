// A user's checkout of Claw-Eval (claw-eval/claw-eval): its tasks/<id>/task.yaml files, read for what Grove needs to
// run them with the checkout's own code (mock services from mock_services/, tasks/<id>/grader.py, models/scoring.py).
// Grove copies none of that code: it reads the yaml here, and runs the rest from DIR (pyenv.ts, services.ts, grade.ts).
// Every task gets a status: `ready`, or `skipped` with one stable reason naming exactly what is missing
// (needs_internet:<service>, missing_file:<path relative to DIR>, missing_grader, missing_python_dep:<module>,
// not_yet:<kind> for the task kinds this path does not run yet, invalid_yaml). Multi-turn tasks (user_agent) run
// with the checkout's own simulated user (driver user_turn) on the caller's user model.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';

/** Services that reach the live internet (a search API key), never run offline. */
export const INTERNET_SERVICES = new Set(['web_real', 'web_real_injection']);

export interface ClawEvalService {
  name: string;
  /** The yaml's command, e.g. `python mock_services/gmail/server.py`; only `python <script under DIR>` is run. */
  script: string;
  port: number;
  health_check: string;
  health_check_method: string;
  ready_timeout_s: number;
  reset_endpoint?: string;
  env: Record<string, string>;
}

export interface ClawEvalTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface ClawEvalEndpoint {
  tool_name: string;
  url: string;
  method: string;
}

export interface ClawEvalTask {
  id: string;
  name: string;
  /** tasks/<dir>, absolute. */
  dir: string;
  yaml_path: string;
  category: string;
  prompt: string;
  tools: ClawEvalTool[];
  endpoints: ClawEvalEndpoint[];
  services: ClawEvalService[];
  max_turns: number;
  timeout_s: number;
  /** A simulated user (Claw-Eval's user_agent) answers when the agent stops calling tools, up to max_rounds. */
  user_agent?: { persona: string; max_rounds: number };
  /** The grader (or the peer grader it loads) calls the judge: runs need a judge endpoint. */
  needs_judge: boolean;
  /** Runs with Claw-Eval's sandbox tools in a Grove shell sandbox: the task has no service, or its grader reads the
   * sandbox (env snapshot, sandbox_grader_files), or it names a sandbox tool. */
  sandbox: boolean;
  sandbox_files: string[];
  /** environment.fixtures: what Claw-Eval injects when sandbox_files is empty. */
  fixtures: string[];
  sandbox_grader_files: string[];
  local_grader_files: string[];
  env_snapshot_files: string[];
  env_snapshot_commands: string[];
  env_snapshot_timeout: number;
  /** prompt.attachments: loaded from DIR into the first message by the checkout's own media loader. */
  attachments: string[];
  status: 'ready' | 'skipped';
  reason?: string;
}

export interface ClawEvalCheckout {
  root: string;
  tasks: ClawEvalTask[];
}

/** Claw-Eval's sandbox tool names (runner/sandbox_tools.py): a task naming one in `tools` runs with the sandbox. */
export const SANDBOX_TOOL_NAMES = new Set(['Bash', 'Read', 'Write', 'Edit', 'Glob', 'Grep', 'BrowserScreenshot', 'ReadMedia', 'Download']);

export class ClawEvalCheckoutError extends Error {
  readonly code = 'invalid_claw_eval_checkout';
}

const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : d);
const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** A path the task names, resolved under `base`, that must stay inside the checkout. */
function inside(root: string, base: string, rel: string): string | undefined {
  const p = path.resolve(base, rel);
  return p === root || p.startsWith(root + path.sep) ? p : undefined;
}

function service(raw: unknown): ClawEvalService | string {
  const s = obj(raw);
  const name = str(s.name);
  const parts = str(s.command).trim().split(/\s+/);
  if (!name) return 'invalid_yaml:service_name';
  if (parts.length !== 2 || !/^python3?$/.test(parts[0]!)) return `unsupported_command:${name}`;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj(s.env))) if (/^[A-Z_][A-Z0-9_]*$/.test(k)) env[k] = str(v);
  return {
    name,
    script: parts[1]!,
    port: num(s.port, 0),
    health_check: str(s.health_check),
    health_check_method: str(s.health_check_method, 'POST').toUpperCase(),
    ready_timeout_s: num(s.ready_timeout, 10),
    reset_endpoint: str(s.reset_endpoint) || undefined,
    env,
  };
}

/** The first thing the task needs that DIR lacks, or undefined. */
function missingFile(root: string, dir: string, d: Record<string, unknown>, services: ClawEvalService[]): string | undefined {
  // bases: where the file is looked for, in order (the task folder, then DIR for cross-task references, as
  // Claw-Eval's inject_files and media loader resolve them)
  const need: { base: string; rel: string; alt?: string }[] = [];
  need.push({ base: dir, rel: 'grader.py' });
  for (const s of services) {
    need.push({ base: root, rel: s.script });
    // Fixture env vars name files under DIR (GMAIL_FIXTURES: tasks/T002/fixtures/gmail/inbox.json).
    for (const [k, v] of Object.entries(s.env)) if (/(_FIXTURES|_DIR|_PAYLOADS)$/.test(k) && v.includes('/')) need.push({ base: root, rel: v });
  }
  for (const key of ['sandbox_files', 'sandbox_grader_files']) for (const f of arr(d[key])) need.push({ base: dir, rel: str(f), alt: root });
  for (const f of arr(d.local_grader_files)) need.push({ base: dir, rel: str(f) });
  for (const f of arr(obj(d.prompt).attachments)) need.push({ base: root, rel: str(f), alt: dir });
  for (const { base, rel, alt } of need) {
    if (!rel) continue;
    const p = inside(root, base, rel);
    const q = alt ? inside(root, alt, rel) : undefined;
    if (!p && !q) return `outside_checkout:${rel}`;
    if ((p && existsSync(p)) || (q && existsSync(q))) continue;
    return `missing_file:${path.relative(root, (base === dir ? p : q) ?? p ?? q!)}`;
  }
  return undefined;
}

/** Whether a grader calls the judge (judge.evaluate*, judge.client): in its own file, in a peer grader it loads
 * (load_peer_grader("<id>")), or in a grader module of the checkout it imports (`from claw_eval.graders.<m> import`,
 * e.g. user_agent_clarify_base, visual_grader: their base classes call the judge, the task's file does not). */
function graderNeedsJudge(root: string, file: string, depth = 0): boolean {
  if (!existsSync(file)) return false;
  const src = readFileSync(file, 'utf8');
  if (/\bjudge\.(evaluate|client|model_id)/.test(src)) return true;
  if (depth >= 3) return false;
  const peer = src.match(/load_peer_grader\(\s*["']([^"']+)["']/);
  if (peer && graderNeedsJudge(root, path.join(path.dirname(path.dirname(file)), peer[1]!, 'grader.py'), depth + 1)) return true;
  for (const m of src.matchAll(/from\s+claw_eval\.graders\.([A-Za-z_][A-Za-z0-9_]*)\s+import/g)) {
    if (graderNeedsJudge(root, path.join(root, 'src', 'claw_eval', 'graders', `${m[1]}.py`), depth + 1)) return true;
  }
  return false;
}

export function loadClawEvalTask(root: string, yamlPath: string): ClawEvalTask {
  const dir = path.dirname(yamlPath);
  const base = { id: path.basename(dir), name: path.basename(dir), dir, yaml_path: yamlPath, category: '', prompt: '', tools: [], endpoints: [], services: [], max_turns: 20, timeout_s: 300, needs_judge: false, sandbox: false, sandbox_files: [], fixtures: [], sandbox_grader_files: [], local_grader_files: [], env_snapshot_files: [], env_snapshot_commands: [], env_snapshot_timeout: 10, attachments: [] };
  let d: Record<string, unknown>;
  try {
    d = obj(parseYaml(readFileSync(yamlPath, 'utf8')));
  } catch {
    return { ...base, status: 'skipped', reason: 'invalid_yaml' };
  }
  const services: ClawEvalService[] = [];
  let reason: string | undefined;
  for (const raw of arr(d.services)) {
    const s = service(raw);
    if (typeof s === 'string') reason ??= s;
    else services.push(s);
  }
  const env = obj(d.environment);
  const strs = (v: unknown) => arr(v).map((x) => str(x)).filter(Boolean);
  const files = {
    sandbox_files: strs(d.sandbox_files),
    fixtures: strs(env.fixtures),
    sandbox_grader_files: strs(d.sandbox_grader_files),
    local_grader_files: strs(d.local_grader_files),
    env_snapshot_files: strs(d.env_snapshot_files),
    env_snapshot_commands: strs(d.env_snapshot_commands),
    env_snapshot_timeout: num(env.env_snapshot_timeout, 10),
    attachments: strs(obj(d.prompt).attachments),
  };
  const tools = arr(d.tools).map((t) => ({ name: str(obj(t).name), description: str(obj(t).description), input_schema: obj(obj(t).input_schema) }));
  // A service task that only lists sandbox_files runs as Claw-Eval's batch without --sandbox runs it (its services'
  // tools alone); one whose grader reads the sandbox (env snapshot, grader files) or that names a sandbox tool gets it.
  const sandbox = services.length === 0 || files.sandbox_grader_files.length + files.env_snapshot_files.length + files.env_snapshot_commands.length > 0 || tools.some((t) => SANDBOX_TOOL_NAMES.has(t.name));
  const task: ClawEvalTask = {
    ...base,
    ...files,
    sandbox,
    id: str(d.task_id, base.id),
    name: str(d.task_name, base.id),
    category: str(d.category),
    prompt: str(obj(d.prompt).text),
    tools,
    endpoints: arr(d.tool_endpoints).map((e) => ({ tool_name: str(obj(e).tool_name), url: str(obj(e).url), method: str(obj(e).method, 'POST').toUpperCase() })),
    services,
    max_turns: num(env.max_turns, 20),
    timeout_s: num(env.timeout_seconds, 300),
    user_agent: obj(d.user_agent).enabled === true ? { persona: str(obj(d.user_agent).persona), max_rounds: num(obj(d.user_agent).max_rounds, 3) } : undefined,
    needs_judge: graderNeedsJudge(root, path.join(dir, 'grader.py')),
    status: 'ready',
  };
  if (!task.prompt) reason ??= 'invalid_yaml:prompt';
  const net = services.find((s) => INTERNET_SERVICES.has(s.name));
  if (net) reason ??= `needs_internet:${net.name}`;
  reason ??= missingFile(root, dir, d, services);
  // the sandbox tools are the checkout's own sandbox server and tool specs
  if (sandbox) for (const f of ['src/claw_eval/sandbox/server.py', 'src/claw_eval/runner/sandbox_tools.py']) if (!existsSync(path.join(root, f))) reason ??= `missing_file:${f}`;
  const endpointTools = new Set(task.endpoints.map((e) => e.tool_name));
  const orphan = task.tools.find((t) => !endpointTools.has(t.name) && !(sandbox && SANDBOX_TOOL_NAMES.has(t.name)));
  if (orphan) reason ??= `not_yet:tool_without_endpoint:${orphan.name}`;
  return reason ? { ...task, status: 'skipped', reason } : task;
}

/** Every tasks/<dir>/task.yaml of the checkout, sorted by folder name. */
export function loadClawEvalCheckout(dir: string): ClawEvalCheckout {
  const root = path.resolve(dir);
  const tasksDir = path.join(root, 'tasks');
  if (!existsSync(tasksDir) || !statSync(tasksDir).isDirectory()) throw new ClawEvalCheckoutError(`${root} has no tasks/ folder: not a Claw-Eval checkout`);
  if (!existsSync(path.join(root, 'src', 'claw_eval', 'models', 'scoring.py'))) throw new ClawEvalCheckoutError(`${root} has no src/claw_eval/models/scoring.py: not a Claw-Eval checkout`);
  const tasks: ClawEvalTask[] = [];
  for (const name of readdirSync(tasksDir).sort()) {
    const y = path.join(tasksDir, name, 'task.yaml');
    if (existsSync(y)) tasks.push(loadClawEvalTask(root, y));
  }
  return { root, tasks };
}

/** Tasks by status and reason, most common first: the coverage table. */
export function coverageTable(tasks: ClawEvalTask[]): { status: string; reason: string; count: number; example: string }[] {
  const m = new Map<string, { status: string; reason: string; count: number; example: string }>();
  for (const t of tasks) {
    const reason = t.reason ?? '';
    const key = `${t.status}\0${reason}`;
    const row = m.get(key) ?? { status: t.status, reason, count: 0, example: t.id };
    row.count++;
    m.set(key, row);
  }
  return [...m.values()].sort((a, b) => (a.status === b.status ? b.count - a.count || a.reason.localeCompare(b.reason) : a.status === 'ready' ? -1 : 1));
}

/** The files whose imports must resolve in the checkout's Python for a task to run (for pyenv.ts probeDeps). */
export function importFiles(root: string, t: ClawEvalTask): string[] {
  return [path.relative(root, path.join(t.dir, 'grader.py')), ...t.services.map((s) => s.script)];
}

/** Ready tasks whose grader or services import a module the checkout's Python lacks become missing_python_dep:<m>. */
export function markMissingDeps(tasks: ClawEvalTask[], missing: Record<string, string | null>): ClawEvalTask[] {
  return tasks.map((t) => (t.status === 'ready' && missing[t.id] ? { ...t, status: 'skipped', reason: `missing_python_dep:${missing[t.id]}` } : t));
}
