// Every public route is accounted for on the kubernetes backend: the table in docs/kubernetes.md ("What is
// relayed") names exactly the routes of docs/openapi.json, plus the PTY WebSocket, each with where it is served.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function documentedRoutes(): Map<string, string> {
  const md = readFileSync(path.join(ROOT, 'docs/kubernetes.md'), 'utf8');
  const section = md.slice(md.indexOf('## What is relayed'), md.indexOf('\n## ', md.indexOf('## What is relayed') + 1));
  const rows = new Map<string, string>();
  for (const m of section.matchAll(/^\| `([A-Z]+ [^`]+)`(?: \(WebSocket\))? \| (.+) \|$/gm)) rows.set(m[1]!, m[2]!);
  return rows;
}

describe('kubernetes backend route coverage', () => {
  test('the docs table lists every route of the OpenAPI document and the PTY, no more', () => {
    const doc = JSON.parse(readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8')) as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    routes.push('GET /sandboxes/{id}/pty');
    const rows = documentedRoutes();
    expect([...rows.keys()].sort()).toEqual(routes.sort());
    for (const [route, where] of rows) expect(where, route).toMatch(/^(orchestrator|worker)\b/);
  });
});
