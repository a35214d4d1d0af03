// Who may use an OpenEnv base URL. OpenEnv's WebSocket client sends no headers, so the key may travel as a path
// segment (/openenv/<key>/<env>, compared in constant time) as well as in X-API-Key (or ?api_key= on a WebSocket):
// with auth off any path key is accepted, and the server's Host and Origin guards still apply.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { GroveError } from '../protocol/errors.ts';
import type { OpenEnvHost } from './host.ts';

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

export type Authorize = (headers: IncomingHttpHeaders, pathKey: string | undefined, queryKey?: string) => GroveError | null;

export function authorizer(host: OpenEnvHost): Authorize {
  const expected = host.config.authDisabled || !host.config.apiKey ? null : sha256(host.config.apiKey);
  return (headers, pathKey, queryKey) => {
    if (pathKey !== undefined && expected) {
      return timingSafeEqual(sha256(pathKey), expected) ? null : new GroveError('forbidden', 'Wrong API key in the base URL (/openenv/<api key>/<env>).');
    }
    if (pathKey === undefined && queryKey !== undefined && !headers['x-api-key']) return host.denied({ ...headers, 'x-api-key': queryKey });
    return host.denied(headers);
  };
}
