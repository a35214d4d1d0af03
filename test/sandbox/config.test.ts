import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, envName, loadConfig } from '../../sandbox/config.ts';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function tmpFile(content: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'grove-cfg-'));
  made.push(dir);
  const f = path.join(dir, 'grove.json');
  writeFileSync(f, content);
  return f;
}

describe('loadConfig', () => {
  it('has documented defaults and generates an API key when none is given', () => {
    const c = loadConfig({ env: {} });
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8321,
      authDisabled: false,
      maxSandboxes: 32,
      defaultTtlSeconds: 3600,
      idleTimeoutSeconds: 600,
      chromiumPath: '/usr/bin/chromium',
      browserProcesses: 2,
      recycleAfter: 50,
      warmPool: 0,
      dataDir: './.grove',
      recordingsDir: './.grove/recordings',
      apiKeySource: 'generated',
    });
    expect(c.apiKey).toMatch(/^grv_[A-Za-z0-9_-]{32}$/);
    expect(loadConfig({ env: {} }).apiKey).not.toBe(c.apiKey);
  });

  it('layers defaults < file < environment < flags', () => {
    const file = tmpFile(JSON.stringify({ port: 9000, maxSandboxes: 5, host: '0.0.0.0', logLevel: 'debug' }));
    const c = loadConfig({
      configFile: file,
      env: { GROVE_PORT: '9100', GROVE_MAX_SANDBOXES: '7', GROVE_API_KEY: 'env-key-123456' },
      flags: { port: 9200 },
    });
    expect(c.port).toBe(9200);
    expect(c.maxSandboxes).toBe(7);
    expect(c.host).toBe('0.0.0.0');
    expect(c.logLevel).toBe('debug');
    expect(c.apiKey).toBe('env-key-123456');
    expect(c.apiKeySource).toBe('env');
    // GROVE_CONFIG names the file when no --config is given.
    expect(loadConfig({ env: { GROVE_CONFIG: file } }).port).toBe(9000);
  });

  it('maps camelCase keys to GROVE_ variables', () => {
    expect(envName('idleTimeoutSeconds')).toBe('GROVE_IDLE_TIMEOUT_SECONDS');
    expect(loadConfig({ env: { GROVE_IDLE_TIMEOUT_SECONDS: '120' } }).idleTimeoutSeconds).toBe(120);
  });

  it('keeps the frame cache off unless GROVE_FRAME_CACHE, the file or a flag turns it on; a bad value is named', () => {
    expect(loadConfig({ env: {} }).frameCache).toBe(false);
    expect(loadConfig({ env: { GROVE_FRAME_CACHE: '1' } }).frameCache).toBe(true);
    expect(loadConfig({ env: { GROVE_FRAME_CACHE: '0' } }).frameCache).toBe(false);
    expect(loadConfig({ env: {}, configFile: tmpFile('{"frameCache": false}') }).frameCache).toBe(false);
    expect(loadConfig({ env: { GROVE_FRAME_CACHE: 'off' }, flags: { frameCache: true } }).frameCache).toBe(true);
    expect(() => loadConfig({ env: { GROVE_FRAME_CACHE: 'sometimes' } })).toThrow('GROVE_FRAME_CACHE: expected a boolean (1/0/true/false), got "sometimes"');
    expect(() => loadConfig({ env: {}, configFile: tmpFile('{"frameCache": "no"}') })).toThrow(/frameCache \(from .*\): /);
  });

  it('disables auth only when asked, and then has no key', () => {
    const c = loadConfig({ env: { GROVE_AUTH_DISABLED: '1' } });
    expect(c.authDisabled).toBe(true);
    expect(c.apiKey).toBeUndefined();
    expect(c.apiKeySource).toBe('none');
  });

  it('names the setting and its source in errors', () => {
    expect(() => loadConfig({ env: { GROVE_PORT: 'eighty' } })).toThrow('GROVE_PORT: expected a number, got "eighty"');
    expect(() => loadConfig({ env: { GROVE_PORT: '70000' } })).toThrow(/port \(from environment GROVE_PORT\): Too big/);
    expect(() => loadConfig({ env: {}, configFile: tmpFile('{"prot": 1}') })).toThrow(/unknown setting\(s\) "prot"/);
    expect(() => loadConfig({ env: {}, configFile: tmpFile('{nope') })).toThrow(/not valid JSON/);
    expect(() => loadConfig({ env: {}, configFile: '/nonexistent/grove.json' })).toThrow(/cannot be read/);
  });

  it('checks option combinations once', () => {
    expect(() => loadConfig({ env: { GROVE_API_KEY: 'some-key-1234' }, flags: { authDisabled: true } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, flags: { warmPool: 5, maxSandboxes: 2 } })).toThrow(/warmPool \(5\) cannot exceed maxSandboxes \(2\)/);
    expect(() => loadConfig({ env: {}, flags: { idleTimeoutSeconds: 1, reaperIntervalMs: 5000 } })).toThrow(/reaperIntervalMs/);
  });

  it('reads the shell image table as JSON from the environment, and names a bad one', () => {
    const c = loadConfig({ env: { GROVE_SHELL_IMAGES: '{"python:3.11":"/srv/rootfs/py311"}' } });
    expect(c.shellImages).toEqual({ 'python:3.11': '/srv/rootfs/py311' });
    expect(c.shellMaxProcesses).toBe(256);
    expect(() => loadConfig({ env: { GROVE_SHELL_IMAGES: '{nope' } })).toThrow(/GROVE_SHELL_IMAGES: expected JSON/);
  });
});
