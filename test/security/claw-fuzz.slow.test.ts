// Route fuzzing of a Claw app origin (issue 30, "the route fuzzer covers the Claw origins' routes"): every tool of
// /api/tools gets bodies generated from its own JSON schema (wrong types, bounds, huge, nested, prototype keys) and
// raw non-JSON bodies; every web route gets malformed paths, query parameters, form posts, methods, cookies and
// headers. Over a real HTTP origin: every answer is below 500, an /api error is {error:{code,message}}, and no
// answer carries a stack trace. The server's own routes are fuzzed in test/server/fuzz.slow.test.ts.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseWorld } from '../../claw-env/fixtures/world.ts';
import { ClawSandbox } from '../../claw-env/sandbox.ts';

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; items?: Schema; enum?: unknown[]; anyOf?: Schema[]; minimum?: number; maximum?: number; maxLength?: number; maxItems?: number };

let sb: ClawSandbox;
let origin = '';
let token = '';
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const findings: string[] = [];
let requests = 0;
const STACK = /\bat [\w$.<>]+ \(|\.ts:\d+:\d+|node:internal|TypeError|RangeError|URIError|SyntaxError: Unexpected/;

beforeAll(async () => {
  sb = new ClawSandbox('sb_fuzz', { seed: baseWorld(5).state, apps: ['mail', 'calendar', 'contacts', 'docs', 'todo'], task: null });
  await sb.ready();
  ({ origin, token } = sb.details().claw!);
});
afterAll(async () => {
  agent.destroy();
  await sb?.close();
});

/** One request with a raw path (not normalised by a URL parser). */
function hit(method: string, path: string, opts: { headers?: Record<string, string>; body?: string | Buffer; auth?: 'bearer' | 'cookie' | 'none' } = {}): Promise<void> {
  const auth = opts.auth ?? 'bearer';
  const headers: Record<string, string> = { ...(auth === 'bearer' ? { authorization: `Bearer ${token}` } : auth === 'cookie' ? { cookie: `claw_token=${token}` } : {}), ...opts.headers };
  if (opts.body !== undefined) headers['content-length'] = String(Buffer.byteLength(opts.body));
  const { port } = new URL(origin);
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        requests++;
        const status = res.statusCode ?? 0;
        const desc = `${method} ${path.slice(0, 160)} ${String(opts.body ?? '').slice(0, 120)} → ${status}`;
        if (status >= 500) findings.push(`${desc}: ${text.slice(0, 200)}`);
        if (STACK.test(text)) findings.push(`${desc}: stack trace in the answer: ${text.slice(0, 300)}`);
        if (status >= 400 && path.startsWith('/api/') && (res.headers['content-type'] ?? '').startsWith('application/json')) {
          const e = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
          if (typeof e?.code !== 'string' || typeof e.message !== 'string') findings.push(`${desc}: not the error shape: ${text.slice(0, 200)}`);
        }
        resolve();
      });
    });
    req.on('error', (err) => {
      findings.push(`${method} ${path.slice(0, 160)}: connection error ${err.message}`);
      resolve();
    });
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

function first(s: Schema): Schema {
  return s.anyOf?.find((x) => x.type !== 'null') ?? s;
}

function sample(s: Schema): unknown {
  const d = first(s);
  if (d.enum) return d.enum[0];
  const type = Array.isArray(d.type) ? d.type.find((t) => t !== 'null') : d.type;
  if (type === 'object') return Object.fromEntries((d.required ?? []).map((k) => [k, sample(d.properties?.[k] ?? {})]));
  if (type === 'array') return [];
  if (type === 'string') return 'a';
  if (type === 'integer' || type === 'number') return d.minimum ?? 1;
  if (type === 'boolean') return true;
  return null;
}

function badValues(s: Schema): unknown[] {
  const d = first(s);
  const out: unknown[] = [null, {}, [], '', 'x', -1, 0, 1e308, -1e308, 0.5, NaN, true, 'a'.repeat(70_000), { $ref: '#' }, '\u0000\r\n', '<script>x</script>', '%ZZ', '../../etc/passwd', '2026-02-30T25:61', '9999-99-99', [[[[[]]]]], { __proto__: { polluted: 1 } }];
  if (d.maximum !== undefined) out.push(d.maximum + 1);
  if (d.minimum !== undefined) out.push(d.minimum - 1);
  if (d.maxLength !== undefined) out.push('b'.repeat(d.maxLength + 1));
  if (d.maxItems !== undefined) out.push(Array.from({ length: d.maxItems + 1 }, () => 'x'));
  if (d.items) out.push([null], [{}], [12], ['a'.repeat(10_000)]);
  return out;
}

function bodies(schema: Schema): unknown[] {
  const base = sample(schema) as Record<string, unknown>;
  const out: unknown[] = [base, { ...base, unknown_field: 1 }];
  for (const [k, ps] of Object.entries(schema.properties ?? {})) {
    for (const bad of badValues(ps)) out.push({ ...base, [k]: bad });
    const { [k]: _drop, ...rest } = base;
    out.push(rest);
    for (const [k2, ps2] of Object.entries(first(ps).properties ?? first(first(ps).items ?? {}).properties ?? {})) {
      for (const bad of badValues(ps2).slice(0, 12)) out.push({ ...base, [k]: first(ps).items ? [{ [k2]: bad }] : { [k2]: bad } });
    }
  }
  return out;
}

const RAW = ['', '{', '[]', 'null', '"x"', 'true', '1e999', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}', '\u0000', 'x'.repeat(2048), '{"a":' + '['.repeat(5000) + ']'.repeat(5000) + '}'];

describe('Claw origin route fuzzing', () => {
  it('the tool API: schema-driven bad bodies for every tool, raw bodies, bad encodings', async () => {
    const list = await (await fetch(`${origin}/api/tools`, { headers: { authorization: `Bearer ${token}` } })).json() as { tools: { function: { name: string; parameters: Schema } }[] };
    expect(list.tools.length).toBeGreaterThan(20);
    for (const { function: f } of list.tools) {
      for (const body of bodies(f.parameters)) await hit('POST', `/api/tools/${f.name}`, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      for (const raw of RAW) await hit('POST', `/api/tools/${f.name}`, { body: raw });
      await hit('POST', `/api/tools/${f.name}`, { body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) });
      await hit('POST', `/api/tools/${f.name}`, { body: '{}', headers: { 'x-claw-actor': '\u00ff'.repeat(100) } });
      sb.app.reset();
    }
    for (const name of ['nope', '..', '.', '__proto__', 'constructor', 'toString', 'a'.repeat(5000), 'mail_send%00', 'mail_send/../state']) {
      await hit('POST', `/api/tools/${name}`, { body: '{}' });
    }
    await hit('POST', '/api/tools/mail_send', { body: 'x'.repeat((1 << 20) + 1) });
    for (const [m, p] of [['GET', '/api/state'], ['GET', '/api/audit'], ['POST', '/api/reset'], ['GET', '/api/tools'], ['DELETE', '/api/state'], ['PUT', '/api/tools/mail_send'], ['GET', '/api/tools/mail_send'], ['POST', '/api/nothing'], ['OPTIONS', '/api/tools']]) {
      await hit(m, p);
      await hit(m, p, { auth: 'none' });
    }
    expect(findings.slice(0, 20)).toEqual([]);
  }, 600_000);

  it('the web UI: malformed paths, parameters, forms, methods, cookies and headers', async () => {
    const enc = encodeURIComponent;
    const junk = ['', '%ZZ', '%', '%00', '%E0%A4%A', '..%2F..', '\u00e9', 'a'.repeat(9000), '<x>', '2026-13-45', '-000001-01-01', '1e999', '[]', 'null', 'undefined', '__proto__'];
    const pages = ['/', '/mail', '/mail/compose', '/calendar', '/calendar/new', '/calendar/freebusy', '/contacts', '/docs', '/todo'];
    const params = ['folder', 'q', 'page_token', 'start', 'date', 'emails', 'status'];
    for (const p of pages) {
      for (const j of junk) {
        for (const k of params) {
          await hit('GET', `${p}?${k}=${/%/.test(j) ? j : enc(j)}`, { auth: 'cookie' });
        }
      }
      for (const m of ['HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'POST']) await hit(m, p, { auth: 'cookie', body: 'a=b' });
    }
    for (const j of junk) {
      const seg = /%/.test(j) ? j : enc(j);
      for (const p of ['/mail/message/', '/calendar/event/', '/contacts/', '/docs/', '/nothing/', '/ui/call/', '/login/']) await hit('GET', p + seg, { auth: 'cookie' });
      await hit('GET', `/login?token=${seg}&next=${seg}`, { auth: 'none' });
      await hit('GET', `/login?token=${enc(token)}&next=${seg}`, { auth: 'none' });
    }
    for (const path of ['//', '///mail', '/mail//message', '/./mail', '/mail/../api/state', '/%2e%2e/api/state', '/mail/message/%2F..%2F..%2Fapi%2Fstate', '/?' + 'a=b&'.repeat(5000)]) await hit('GET', path, { auth: 'cookie' });
    // Forms: every tool with junk fields, a junk _back, missing fields, bad urlencoding, not-a-form bodies.
    const list = await (await fetch(`${origin}/api/tools`, { headers: { authorization: `Bearer ${token}` } })).json() as { tools: { function: { name: string; parameters: Schema } }[] };
    for (const { function: f } of list.tools) {
      const fields = Object.keys(f.parameters.properties ?? {});
      for (const j of junk.slice(0, 10)) {
        const form = fields.map((k) => `a.${k}=${/%/.test(j) ? j : enc(j)}`).join('&');
        await hit('POST', `/ui/call/${f.name}`, { auth: 'cookie', body: `_back=${/%/.test(j) ? j : enc(j)}&${form}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      }
      await hit('POST', `/ui/call/${f.name}`, { auth: 'cookie', body: fields.map((k) => `a.${k}.${k}.x=1&a.${k}=`).join('&') });
      await hit('POST', `/ui/call/${f.name}`, { auth: 'cookie', body: '{"json":"not a form"}', headers: { 'content-type': 'application/json' } });
      sb.app.reset();
    }
    await hit('POST', '/ui/call/mail_send', { auth: 'cookie', body: 'a.__proto__.polluted=1&a.constructor.prototype.x=1' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Cookies and headers.
    for (const cookie of ['claw_token=%ZZ', 'claw_token', '=', ';;;', 'claw_token=a; claw_token=b', `claw_token=${token}; claw_token=%`, `claw_token=${'a'.repeat(8000)}`, '\u00ff=\u00ff']) {
      await hit('GET', '/mail', { auth: 'none', headers: { cookie } });
      await hit('POST', '/api/tools/mail_list_folders', { auth: 'none', headers: { cookie }, body: '{}' });
    }
    for (const headers of <Record<string, string>[]>[{ authorization: 'Bearer' }, { authorization: 'Bearer ' }, { authorization: `Bearer ${token} ` }, { 'x-claw-token': '' }, { origin: 'null' }, { 'sec-fetch-site': '\u00ff' }, { 'x-claw-actor': '' }]) {
      await hit('GET', '/mail', { auth: 'none', headers });
      await hit('POST', '/api/tools/mail_list_folders', { auth: 'none', headers, body: '{}' });
    }
    expect(findings.slice(0, 20)).toEqual([]);
    expect(requests).toBeGreaterThan(3000);
  }, 600_000);
});
