// Ids that cannot be guessed or enumerated: a type prefix and 72 random bits (base64url). Deterministic ids
// for generated fixtures come from a seeded generator instead (sandbox/prng.ts, via fixtures/world.ts), equally opaque to an agent.
import { randomBytes } from 'node:crypto';

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString('base64url')}`;
}

/** Long random secret (per-sandbox token). */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}
