// Before `grove run` starts episodes: are the Grove server, the policy and the judge model there at all? Without this,
// an unreachable endpoint showed as every episode ending generation_error / env_error and an exit code of 0.
import type { GroveClient } from '../../client/index.ts';

/** A run that cannot start: reported as its message alone (no stack), exit 1. */
export class RunStopped extends Error {}

const TIMEOUT_MS = 10_000;

/** Why a model endpoint cannot serve, or null when it answered (any HTTP status but 401/403 counts as there). */
export async function probeModelEndpoint(baseURL: string, o: { apiKey?: string; api?: 'chat' | 'anthropic' | 'responses' } = {}): Promise<string | null> {
  const headers: Record<string, string> = {};
  if (o.api === 'anthropic') {
    headers['anthropic-version'] = '2023-06-01';
    if (o.apiKey) headers['x-api-key'] = o.apiKey;
  } else if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
  let res: Response;
  try {
    // GET …/models is served by OpenAI, vLLM, SGLang and Anthropic; a server without it still answers (404).
    res = await fetch(`${baseURL.replace(/\/+$/, '')}/models`, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const why = e.name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : (e.cause?.code ?? e.cause?.message ?? e.message);
    return `unreachable (${why})`;
  }
  await res.body?.cancel();
  if (res.status === 401 || res.status === 403) return `refused the API key (HTTP ${res.status})`;
  return null;
}

/** Throws RunStopped naming every endpoint of the run that cannot serve it. */
export async function preflight(o: {
  grove?: { url: string; client: GroveClient };
  policy?: { url: string; apiKey?: string; api?: 'chat' | 'anthropic' | 'responses' };
  judge?: { url: string; apiKey?: string };
}): Promise<void> {
  const problems: string[] = [];
  const checks: Promise<void>[] = [];
  if (o.grove) {
    const g = o.grove;
    // Listing sandboxes needs the key, so a wrong --api-key shows here too.
    checks.push(g.client.listSandboxes().then(() => undefined, (err: Error) => void problems.push(`the Grove server at ${g.url}: ${err.message}`)));
  }
  if (o.policy) {
    const p = o.policy;
    checks.push(probeModelEndpoint(p.url, p).then((why) => void (why && problems.push(`the policy at ${p.url}: ${why}`))));
  }
  if (o.judge) {
    const j = o.judge;
    checks.push(probeModelEndpoint(j.url, j).then((why) => void (why && problems.push(`the judge model at ${j.url}: ${why}`))));
  }
  await Promise.all(checks);
  if (problems.length) throw new RunStopped(`cannot start: ${problems.join('; ')}`);
}
