// Writes docs/openapi.json from the route definitions; `--check` exits 1 when the committed file drifts.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VERSION } from '../server/app.ts';
import { buildOpenApi } from '../server/openapi.ts';
import { ROUTES } from '../server/routes/index.ts';

const target = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));
const text = JSON.stringify(buildOpenApi(ROUTES, VERSION), null, 2) + '\n';

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing counts as drift
  }
  if (current !== text) {
    console.error('docs/openapi.json is out of date with the route schemas; run `npm run openapi` and commit it.');
    process.exitCode = 1;
  } else {
    console.log('docs/openapi.json is up to date.');
  }
} else {
  writeFileSync(target, text);
  console.log(`wrote ${target} (${ROUTES.length} routes)`);
}
