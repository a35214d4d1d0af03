// The Origin rule of a server without authentication (sandbox/host-guard.ts): only loopback pages, or no Origin.
import { describe, expect, it } from 'vitest';
import { originAllowedWithoutAuth } from '../../sandbox/host-guard.ts';

describe('originAllowedWithoutAuth', () => {
  it('passes loopback origins and non-browser clients (no Origin)', () => {
    for (const o of [undefined, 'http://127.0.0.1:8321', 'http://localhost', 'https://localhost:3000', 'http://[::1]:80', 'http://127.1.2.3:9']) {
      expect(originAllowedWithoutAuth(o, '127.0.0.1'), String(o)).toBe(true);
    }
  });
  it('refuses other sites, opaque and malformed origins', () => {
    for (const o of ['http://evil.example', 'http://evil.example:8321', 'null', '', ' ', 'file://', 'chrome-extension://abc', 'http://127.0.0.1.evil.example', 'http://localhost.evil.example', 'http://localhost@evil.example', 'http://evil.example/127.0.0.1', 'ws://evil.example', 'http://0.0.0.0:8321', 'http://10.0.0.5']) {
      expect(originAllowedWithoutAuth(o, '127.0.0.1'), o).toBe(false);
    }
  });
  it('passes the specific bind address of an overridden remote bind, never a wildcard', () => {
    expect(originAllowedWithoutAuth('http://10.0.0.5:8321', '10.0.0.5')).toBe(true);
    expect(originAllowedWithoutAuth('http://10.0.0.5:8321', '0.0.0.0')).toBe(false);
  });
});
