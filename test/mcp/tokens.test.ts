// Sandbox tokens of the MCP endpoints (mcp/tokens.ts) and the bearer header parser: a token opens exactly its
// sandbox, servers sharing the secret agree, and the header is read strictly.
import { describe, expect, it } from 'vitest';
import { bearer, SandboxTokens } from '../../mcp/tokens.ts';
import { objectSchema } from '../../mcp/claw-tools.ts';

describe('MCP sandbox tokens', () => {
  it('open exactly their sandbox; the same secret gives the same token, another secret another', () => {
    const t = new SandboxTokens('secret-one');
    const a = t.tokenFor('sb-a');
    expect(a).toMatch(/^gmcp_[A-Za-z0-9_-]{43}$/);
    expect(t.verify('sb-a', a)).toBe(true);
    expect(t.verify('sb-b', a)).toBe(false);
    expect(t.verify('sb-a', `${a} `)).toBe(false);
    expect(new SandboxTokens('secret-one').tokenFor('sb-a')).toBe(a);
    expect(new SandboxTokens('secret-two').tokenFor('sb-a')).not.toBe(a);
    // A Claw sandbox's own app token is accepted beside its MCP token, only for that sandbox.
    expect(t.verify('sb-a', 'app-token', 'app-token')).toBe(true);
    expect(t.verify('sb-a', 'app-token', 'other')).toBe(false);
  });

  it('reads "Bearer <token>" and nothing else', () => {
    expect(bearer('Bearer abc')).toBe('abc');
    expect(bearer('bearer abc')).toBe('abc');
    for (const h of [undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer a b', 'Bearerabc', ['Bearer a']]) expect(bearer(h as never)).toBeUndefined();
  });

  it('MCP input schemas are objects at the top', () => {
    expect(objectSchema(undefined)).toEqual({ type: 'object', properties: {} });
    expect(objectSchema({ type: 'object', properties: { a: { type: 'string' } } })).toEqual({ type: 'object', properties: { a: { type: 'string' } } });
    expect(objectSchema({ properties: { a: {} } })).toEqual({ type: 'object', properties: { a: {} } });
  });
});
