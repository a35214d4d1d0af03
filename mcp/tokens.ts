// Sandbox tokens for the MCP endpoints: each sandbox's own bearer token, an HMAC of its id under the server's
// secret (servers sharing the secret — replicas with one API key — agree on it; nothing is stored). A Claw
// sandbox's own app token is accepted too: it is what a harness beside it already holds. A token opens exactly one
// sandbox's endpoint; Grove's API key never has to enter a sandbox.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const sha256 = (s: string) => createHash('sha256').update(s).digest();

export class SandboxTokens {
  private readonly key: Buffer;
  constructor(secret: string) {
    this.key = sha256(`grove-mcp-token\0${secret}`);
  }

  tokenFor(sandboxId: string): string {
    return `gmcp_${createHmac('sha256', this.key).update(sandboxId).digest('base64url')}`;
  }

  /** Constant-time comparison of a presented token with the sandbox's (and its own app token, when it has one). */
  verify(sandboxId: string, given: string, appToken?: string): boolean {
    const g = sha256(given);
    let ok = timingSafeEqual(g, sha256(this.tokenFor(sandboxId)));
    if (appToken !== undefined) ok = timingSafeEqual(g, sha256(appToken)) || ok;
    return ok;
  }
}

/** The bearer token of an Authorization header ("Bearer <token>", case-insensitive scheme), or undefined. */
export function bearer(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}
