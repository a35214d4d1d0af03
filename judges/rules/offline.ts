// Rule judge of the offline sites: checks the task's state-based ground truth (extra.ground_truth) against
// the session state dump of the sites server and the agent's final answer. No model involved.
import type { Task, Verdict } from '../../protocol/task.ts';
import { GroundTruth, type Check, type FieldValue } from '../../sites/spec.ts';
import { SessionState } from '../../sites/state.ts';
import { JudgeError, judgeErrorVerdict, type Judge, type JudgeInput } from '../types.ts';

const OFFLINE_JUDGE_NAME = 'rule:offline';

interface CheckResult {
  kind: Check['kind'];
  ok: boolean;
  reason: string;
}

/** Lowercase word and number tokens; thousands separators and currency signs are dropped. */
function answerTokens(s: string): string[] {
  const t = s.toLowerCase().replace(/(\d),(?=\d{3}(?!\d))/g, '$1');
  return t.match(/\d+(?:\.\d+)?|[a-z]+/g) ?? [];
}

const sameToken = (a: string, b: string) => a === b || (/^\d/.test(a) && /^\d/.test(b) && Number(a) === Number(b));

/** True when the tokens of `accepted` occur contiguously in the tokens of `answer`. */
export function answerMatches(answer: string, accepted: string): boolean {
  const a = answerTokens(answer);
  const b = answerTokens(accepted);
  if (b.length === 0) return false;
  for (let i = 0; i + b.length <= a.length; i++) if (b.every((t, k) => sameToken(a[i + k], t))) return true;
  return false;
}

const norm = (v: unknown) => String(v ?? '').toLowerCase().replace(/\s+/g, ' ').trim();

export function fieldMatches(actual: unknown, expected: FieldValue): boolean {
  if (typeof expected === 'boolean') return actual === expected || norm(actual) === String(expected);
  if (typeof expected === 'number') return actual !== '' && actual !== null && Number(actual) === expected;
  if (Array.isArray(expected)) {
    const got = (Array.isArray(actual) ? actual : actual === undefined || actual === '' ? [] : [actual]).map(norm).sort();
    const want = expected.map(norm).sort();
    return got.length === want.length && got.every((g, i) => g === want[i]);
  }
  if (typeof expected === 'object') return norm(actual).includes(norm(expected.contains));
  return norm(actual) === norm(expected);
}

function fieldsMatch(actual: Record<string, unknown>, expected: Record<string, FieldValue>): string[] {
  return Object.entries(expected)
    .filter(([k, v]) => !fieldMatches(actual[k], v))
    .map(([k, v]) => `${k}: expected ${JSON.stringify(v)}, got ${JSON.stringify(actual[k])}`);
}

const linesEqual = (got: { product_id: string; qty: number }[], want: { id: string; qty: number }[]) =>
  got.length === want.length && want.every((w) => got.some((g) => g.product_id === w.id && g.qty === w.qty));

/** Evaluates one check. `state` may be undefined only for answer checks. */
function runCheck(c: Check, state: SessionState | undefined, answer: string | undefined): CheckResult {
  const res = (ok: boolean, reason: string): CheckResult => ({ kind: c.kind, ok, reason });
  if (c.kind === 'answer') {
    if (answer === undefined || answer.trim() === '') return res(false, 'no answer was given');
    const hit = c.accepted.find((a) => answerMatches(answer, a));
    return hit ? res(true, `answer names "${hit}"`) : res(false, `answer does not name any of ${JSON.stringify(c.accepted)}`);
  }
  if (!state) return res(false, 'no session state (the session never reached the sites server)');
  switch (c.kind) {
    case 'cart': {
      const cart = state.shop.cart;
      const missing = c.items.filter((w) => !cart.some((g) => g.product_id === w.id && g.qty === w.qty));
      if (missing.length) return res(false, `cart lacks ${missing.map((m) => `${m.qty} × ${m.id}`).join(', ')}; cart is ${JSON.stringify(cart.map((l) => `${l.qty} × ${l.product_id}`))}`);
      if (c.exact && cart.length !== c.items.length) return res(false, `cart holds other products too: ${JSON.stringify(cart.map((l) => `${l.qty} × ${l.product_id}`))}`);
      return res(true, 'cart matches');
    }
    case 'order': {
      const cand = state.shop.orders.filter((o) => linesEqual(o.items, c.items));
      if (!cand.length) return res(false, `no order with exactly ${c.items.map((m) => `${m.qty} × ${m.id}`).join(', ')} (orders: ${state.shop.orders.length})`);
      const good = cand.find((o) => fieldsMatch(o.shipping, c.shipping).length === 0);
      return good ? res(true, `order ${good.id} matches`) : res(false, `order shipping differs: ${fieldsMatch(cand[0].shipping, c.shipping).join('; ')}`);
    }
    case 'favourites': {
      const favs = state.recipes.favourites;
      const missing = c.ids.filter((id) => !favs.includes(id));
      if (missing.length) return res(false, `favourites lack ${missing.join(', ')}; favourites are ${JSON.stringify(favs)}`);
      if (c.exact && favs.length !== c.ids.length) return res(false, `favourites hold others too: ${JSON.stringify(favs)}`);
      return res(true, 'favourites match');
    }
    case 'shopping_list': {
      const list = state.recipes.shopping_list;
      const missing = c.entries.filter((e) => !list.some((l) => l.recipe_id === e.recipe && l.servings === e.servings));
      const shown = JSON.stringify(list.map((l) => `${l.recipe_id} × ${l.servings}`));
      if (missing.length) return res(false, `shopping list lacks ${missing.map((m) => `${m.recipe} for ${m.servings}`).join(', ')}; list is ${shown}`);
      if (c.exact && list.length !== c.entries.length) return res(false, `shopping list holds other recipes too: ${shown}`);
      return res(true, 'shopping list matches');
    }
    case 'submission': {
      const subs = state.forms.submissions.filter((s) => s.form === c.form);
      if (c.count !== undefined && subs.length !== c.count) return res(false, `expected ${c.count} ${c.form} submission(s), found ${subs.length}`);
      const withStatus = subs.filter((s) => s.status === c.status);
      const good = withStatus.find((s) => fieldsMatch(s.fields, c.fields).length === 0);
      if (good) return res(true, `${c.form} ${good.ref} matches`);
      if (!withStatus.length) return res(false, `no ${c.status} ${c.form} submission (found ${subs.length} ${c.form} submission(s))`);
      return res(false, `${c.form} fields differ: ${fieldsMatch(withStatus[withStatus.length - 1].fields, c.fields).join('; ')}`);
    }
    case 'download': {
      const re = new RegExp(c.filename);
      const d = state.downloads.find((x) => re.test(x.filename));
      return d ? res(true, `downloaded ${d.filename}`) : res(false, `no download matching /${c.filename}/ (downloads: ${JSON.stringify(state.downloads.map((x) => x.filename))})`);
    }
  }
}

function checkGroundTruth(gt: GroundTruth, state: SessionState | undefined, answer?: string): { success: boolean; results: CheckResult[] } {
  const results = gt.checks.map((c) => runCheck(c, state, answer));
  return { success: results.every((r) => r.ok), results };
}

/** GET /__grove/state/<session>: the state, or undefined when the server never saw the session. */
export async function fetchOfflineState(baseUrl: string, sessionId: string, opts: { fetch?: typeof fetch; timeoutMs?: number } = {}): Promise<SessionState | undefined> {
  const f = opts.fetch ?? fetch;
  const url = `${baseUrl.replace(/\/+$/, '')}/__grove/state/${encodeURIComponent(sessionId)}`;
  let res: Response;
  try {
    res = await f(url, { signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
  } catch (err) {
    throw new JudgeError('api_error', `could not fetch the offline sites state from ${url}: ${(err as Error).message}`, { cause: err });
  }
  if (res.status === 404) return undefined;
  if (!res.ok) throw new JudgeError('api_error', `sites state endpoint answered HTTP ${res.status} for ${url}`);
  const parsed = SessionState.safeParse(await res.json());
  if (!parsed.success) throw new JudgeError('bad_input', `sites state of ${sessionId} has an unexpected shape: ${parsed.error.message}`);
  return parsed.data;
}

interface OfflineJudgeInput extends Partial<Omit<JudgeInput, 'task'>> {
  task: Task;
  /** The episode's session id on the sites server; used when `state` is not given. */
  sessionId?: string;
}

export interface OfflineRuleJudge extends Judge {
  judge(input: OfflineJudgeInput): Promise<Verdict>;
}

/**
 * The offline rule judge. State comes from `input.state` (the runner's state hook) or is fetched from
 * `baseUrl` with `input.sessionId`. Verdict details list every check with its reason.
 */
export function offlineRuleJudge(baseUrl: string, opts: { fetch?: typeof fetch; timeoutMs?: number } = {}): OfflineRuleJudge {
  const name = OFFLINE_JUDGE_NAME;
  return {
    name,
    async judge(input) {
      try {
        const gtParsed = GroundTruth.safeParse(input.task.extra?.ground_truth);
        if (!gtParsed.success) throw new JudgeError('bad_input', `task ${input.task.id} carries no offline ground truth (extra.ground_truth)`);
        const gt = gtParsed.data;
        const needsState = gt.checks.some((c) => c.kind !== 'answer');
        let state: SessionState | undefined;
        if (input.state !== undefined && input.state !== null) {
          const p = SessionState.safeParse(input.state);
          if (!p.success) throw new JudgeError('bad_input', `state given to the judge is not an offline sites state: ${p.error.message}`);
          state = p.data;
        } else if (needsState) {
          if (!input.sessionId) throw new JudgeError('bad_input', `task ${input.task.id} needs the sites state but neither state nor sessionId was given`);
          state = await fetchOfflineState(baseUrl, input.sessionId, opts);
        }
        const { success, results } = checkGroundTruth(gt, state, input.answer);
        return {
          judge: name,
          outcome: success ? 'success' : 'failure',
          score: success ? 1 : 0,
          reasoning: results.map((r) => `${r.ok ? 'ok' : 'FAIL'} ${r.kind}: ${r.reason}`).join('\n'),
          details: { checks: results, session: input.sessionId ?? state?.id },
        };
      } catch (err) {
        return judgeErrorVerdict(name, err);
      }
    },
  };
}
