// Reads Claw-Eval's public task.yaml (claw-eval/claw-eval src/claw_eval/models/task.py: task_id, task_name,
// prompt.text, services[].env fixtures, tools[] with input_schema, tool_endpoints[], environment.max_turns /
// timeout_seconds, scoring_components[].check {type, tool_name, min_calls, keywords, rubric}, safety_checks[]
// {type: tool_not_called, tool_name}, judge_rubric) into a ClawTask. A task either converts completely or
// fails here with a ClawTaskError naming what is missing (unsupported_service:<name>, unsupported_tool:<name>,
// unsupported_check:<type>) — it never half-runs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ClawState, type ClawStateInput } from '../state.ts';
import { iso } from '../time.ts';
import { CLAW_EVAL_ENDPOINTS, compatToolFor, SERVICE_APPS } from './claw-eval-compat.ts';
import { parseTask, type Check, type ClawTask, type SafetyCheck } from './format.ts';

export class ClawTaskError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'ClawTaskError';
  }
}

type Obj = Record<string, any>;
const arr = (v: unknown): any[] => (Array.isArray(v) ? v : []);
const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : d);

const FIXTURE_ENV: Record<string, string> = { gmail: 'GMAIL_FIXTURES', calendar: 'CALENDAR_FIXTURES', contacts: 'CONTACTS_FIXTURES', todo: 'TODO_FIXTURES' };

export interface ClawEvalLoadOptions {
  /** Where relative fixture paths resolve (Claw-Eval resolves them from its repository root). Default: the
   * directory above `tasks/`, else the task's own directory. */
  root?: string;
  /** The user the apps belong to. */
  user?: { name: string; email: string; timezone?: string };
}

function readFixture(file: string, roots: string[], service: string): unknown[] {
  for (const r of roots) {
    const p = path.resolve(r, file);
    try {
      const v = JSON.parse(readFileSync(p, 'utf8'));
      if (!Array.isArray(v)) throw new ClawTaskError('bad_fixture', `${p}: expected a JSON array of ${service} records`);
      return v;
    } catch (err) {
      if (err instanceof ClawTaskError) throw err;
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new ClawTaskError('bad_fixture', `${p}: ${(err as Error).message}`);
    }
  }
  throw new ClawTaskError('missing_fixture', `${service} fixture ${file} not found under ${roots.join(' or ')}`);
}

/** Builds the seed state from the services' fixture files; "now" is a day after the newest mail (Claw-Eval shifts
 * mail so the newest is ~1 day old), else a day before the earliest event, else the latest todo. */
function seedFrom(fixtures: Record<string, unknown[]>, user: ClawEvalLoadOptions['user']): ClawState {
  const u = { name: user?.name ?? 'User', email: user?.email ?? 'me@example.com', timezone: user?.timezone ?? 'UTC' };
  const mails = (fixtures.gmail ?? []) as Obj[];
  const events = (fixtures.calendar ?? []) as Obj[];
  const times = mails.map((m) => Date.parse(str(m.date))).filter((n) => !Number.isNaN(n));
  const starts = events.map((e) => Date.parse(str(e.start_time))).filter((n) => !Number.isNaN(n));
  const now = times.length ? Math.max(...times) + 86_400_000 : starts.length ? Math.min(...starts) - 86_400_000 : Date.parse('2026-03-01T09:00:00Z');
  const input: ClawStateInput = {
    user: u,
    now: iso(now),
    mail: {
      messages: mails.map((m, i) => ({
        id: str(m.message_id, `msg_${i + 1}`), thread_id: str(m.thread_id, str(m.message_id, `thr_${i + 1}`)), folder: 'inbox', labels: arr(m.labels).map(String),
        from: str(m.from), to: typeof m.to === 'string' ? [m.to] : arr(m.to).map(String).length ? arr(m.to).map(String) : [u.email], cc: arr(m.cc).map(String),
        subject: str(m.subject), body: str(m.body), date: str(m.date), read: m.is_read === true, attachments: arr(m.attachments).map((a: any) => ({ filename: str(a?.filename ?? a?.name ?? a), mime: str(a?.mime ?? a?.mime_type, 'application/octet-stream'), size: Number(a?.size ?? 0) || 0 })),
      })),
    },
    calendar: {
      events: events.map((e, i) => ({
        id: str(e.event_id, `evt_${i + 1}`), title: str(e.title), start: str(e.start_time), end: str(e.end_time), timezone: 'UTC', location: str(e.location), description: str(e.description),
        organizer: str(e.organizer, u.email), attendees: arr(e.attendees).map((a: any) => ({ email: str(a?.email ?? a), response: 'accepted' as const })),
      })),
      busy: {},
    },
    contacts: ((fixtures.contacts ?? []) as Obj[]).map((c, i) => ({ id: str(c.contact_id, `con_${i + 1}`), name: str(c.name), email: str(c.email, `${i + 1}@unknown.invalid`), phone: str(c.phone), company: str(c.department ?? c.company), title: str(c.title ?? c.role), notes: str(c.notes) })),
    todos: ((fixtures.todo ?? []) as Obj[]).map((t, i) => ({
      id: str(t.task_id, `todo_${i + 1}`), title: str(t.title), notes: str(t.description), list: 'inbox', priority: t.priority === 'high' || t.priority === 'urgent' ? 'high' : t.priority === 'low' ? 'low' : 'normal',
      status: ['completed', 'done'].includes(str(t.status)) ? 'done' : 'open', created_at: str(t.created_at, iso(now)), ...(typeof t.due_date === 'string' && /^\d{4}-\d{2}-\d{2}/.test(t.due_date) ? { due: t.due_date.slice(0, 10) } : {}),
    })),
  };
  return ClawState.parse(input);
}

export function convertClawEvalTask(doc: unknown, file: string, opts: ClawEvalLoadOptions = {}): ClawTask {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new ClawTaskError('invalid_task', `${file}: not a YAML mapping`);
  const d = doc as Obj;
  const id = str(d.task_id);
  if (!id) throw new ClawTaskError('invalid_task', `${file}: task_id missing`);
  const prompt = typeof d.prompt === 'string' ? d.prompt : str(d.prompt?.text);
  if (!prompt) throw new ClawTaskError('invalid_task', `${file}: prompt.text missing`);

  const dir = path.dirname(path.resolve(file));
  const roots = opts.root ? [opts.root] : [path.basename(path.dirname(dir)) === 'tasks' ? path.dirname(path.dirname(dir)) : dir, dir];
  const apps = new Set<string>();
  const fixtures: Record<string, unknown[]> = {};
  for (const s of arr(d.services)) {
    const name = str(s?.name);
    const app = SERVICE_APPS[name];
    if (!app) throw new ClawTaskError(`unsupported_service:${name}`, `${id}: Grove's Claw apps have no "${name}" service (supported: ${Object.keys(SERVICE_APPS).join(', ')})`);
    apps.add(app);
    const env = (s.env ?? {}) as Obj;
    const f = str(env[FIXTURE_ENV[name]]);
    if (f) fixtures[name] = readFixture(f, roots, name);
  }

  const endpoints = new Map(arr(d.tool_endpoints).map((e: Obj) => [str(e.tool_name), str(e.url)]));
  const aliases: Record<string, string> = {};
  const toolDefs: NonNullable<ClawTask['tool_defs']> = [];
  for (const t of arr(d.tools)) {
    const name = str(t?.name);
    const url = endpoints.get(name);
    const compat = url ? compatToolFor(url) : undefined;
    if (!compat) throw new ClawTaskError(`unsupported_tool:${name}`, `${id}: tool "${name}" (${url ?? 'no endpoint'}) maps to no Claw endpoint (known: ${Object.keys(CLAW_EVAL_ENDPOINTS).join(', ')})`);
    apps.add(compat.app);
    aliases[name] = compat.name;
    toolDefs.push({ type: 'function', function: { name, description: str(t.description), parameters: (t.input_schema ?? { type: 'object', properties: {} }) as Record<string, unknown> } });
  }
  if (apps.size === 0) throw new ClawTaskError('unsupported_service:none', `${id}: the task uses no Claw service (mail, calendar, contacts, todo)`);

  const completion: Check[] = arr(d.scoring_components).map((c: Obj, i: number): Check => {
    const chk = (c.check ?? {}) as Obj;
    const type = str(chk.type);
    const base = { name: str(c.name, `component_${i + 1}`), weight: Number(c.weight ?? 1) };
    if (type === 'tool_called') return { type, tool: str(chk.tool_name), min_calls: Number(chk.min_calls ?? 1), ...base };
    // Claw-Eval's keyword lists are alternatives (e.g. [冲突, 空闲, 可用]): any one of them present passes.
    if (type === 'keywords_present') return { type, keywords: arr(chk.keywords).map(String), match: 'any' as const, ...base };
    if (type === 'llm_judge') return { type, rubric: str(chk.rubric) || str(d.judge_rubric) || str(chk.description) || prompt, ...base };
    throw new ClawTaskError(`unsupported_check:${type || '(none)'}`, `${id}: scoring component "${base.name}" has a check type Grove does not run (supported: tool_called, keywords_present, llm_judge)`);
  });
  if (completion.length === 0) throw new ClawTaskError('unsupported_check:grader.py', `${id}: no scoring_components (the task relies on its grader.py)`);
  const safety: SafetyCheck[] = arr(d.safety_checks).map((s: unknown): SafetyCheck => {
    const o = (typeof s === 'object' && s !== null ? s : { type: 'text' }) as Obj;
    if (o.type === 'tool_not_called' && o.tool_name) return { type: 'tool_not_called', tool: str(o.tool_name), description: str(o.description) };
    throw new ClawTaskError(`unsupported_check:safety_${str(o.type) || 'text'}`, `${id}: safety check ${JSON.stringify(s).slice(0, 80)} cannot be checked (supported: tool_not_called)`);
  });
  const env = (d.environment ?? {}) as Obj;
  return parseTask(
    {
      id,
      title: str(d.task_name),
      prompt,
      apps: [...apps],
      tools: toolDefs.map((t) => t.function.name),
      tool_defs: toolDefs,
      aliases,
      seed: seedFrom(fixtures, opts.user),
      limits: { max_turns: Number(env.max_turns ?? 20), timeout_seconds: Number(env.timeout_seconds ?? 300) },
      completion,
      safety,
      source: 'claw-eval',
      category: str(d.category),
      tags: arr(d.tags).map(String),
    },
    file,
  );
}

/** Reads and converts one task.yaml. */
export function loadClawEvalTask(file: string, opts: ClawEvalLoadOptions = {}): ClawTask {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ClawTaskError('invalid_yaml', `${file}: ${(err as Error).message}`);
  }
  return convertClawEvalTask(doc, file, opts);
}
