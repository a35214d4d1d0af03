// CLI dispatch and `grove serve` option parsing, in-process (no server started).
import { describe, expect, it } from 'vitest';
import type { Command } from '../../cli/command.ts';
import { parseServeArgs } from '../../cli/commands/serve-args.ts';
import { COMMANDS } from '../../cli/commands/index.ts';
import { main } from '../../cli/main.ts';
import { ConfigError, loadConfig } from '../../sandbox/config.ts';

function capture() {
  const io = { outText: '', errText: '', out: (s: string) => void (io.outText += s), err: (s: string) => void (io.errText += s) };
  return io;
}

const echo: Command = {
  name: 'echo',
  summary: 'Echo the arguments',
  usage: 'grove echo [words...]',
  async run(argv) {
    return argv.length;
  },
};

describe('grove main', () => {
  it('lists every registered command in --help', async () => {
    const io = capture();
    expect(await main(['--help'], io)).toBe(0);
    for (const c of COMMANDS) expect(io.outText).toContain(`  ${c.name}`);
    expect(io.outText).toContain('serve');
  });

  it('dispatches to a command with the remaining argv and returns its exit code', async () => {
    const io = capture();
    expect(await main(['echo', 'a', 'b', 'c'], io, [echo])).toBe(3);
  });

  it('help <cmd> and <cmd> --help print the usage', async () => {
    const a = capture();
    expect(await main(['help', 'echo'], a, [echo])).toBe(0);
    expect(a.outText).toBe('grove echo [words...]\n');
    const b = capture();
    expect(await main(['echo', '--help'], b, [echo])).toBe(0);
    expect(b.outText).toBe('grove echo [words...]\n');
  });

  it('an unknown command exits 2 with a suggestion', async () => {
    const io = capture();
    expect(await main(['ech'], io, [echo])).toBe(2);
    expect(io.errText).toContain('unknown command "ech" (did you mean echo?)');
  });
});

describe('grove serve options', () => {
  it('map onto config keys with the highest precedence', () => {
    const args = parseServeArgs([
      '--port', '9999', '--host', '0.0.0.0', '--api-key', 'flag-key-1234', '--max-sandboxes', '4',
      '--warm-pool', '1', '--data-dir', '/tmp/g', '--idle-timeout', '30', '--config', '/etc/grove.json',
    ]);
    expect(args).toEqual({
      configFile: '/etc/grove.json',
      flags: { port: 9999, host: '0.0.0.0', apiKey: 'flag-key-1234', maxSandboxes: 4, warmPool: 1, dataDir: '/tmp/g', idleTimeoutSeconds: 30 },
    });
    const c = loadConfig({ env: { GROVE_PORT: '1111', GROVE_API_KEY: 'env-key-12345' }, flags: args.flags });
    expect(c.port).toBe(9999);
    expect(c.apiKey).toBe('flag-key-1234');
    expect(c.apiKeySource).toBe('flag');
  });

  it('--no-auth disables auth; bad values and unknown flags are ConfigErrors naming the flag', () => {
    expect(parseServeArgs(['--no-auth']).flags).toEqual({ authDisabled: true });
    expect(parseServeArgs(['--no-frame-cache']).flags).toEqual({ frameCache: false });
    expect(() => parseServeArgs(['--no-frame-cache=1'])).toThrow(ConfigError);
    expect(() => parseServeArgs(['--port', 'x'])).toThrow(new ConfigError('--port: expected a number, got "x"'));
    expect(() => parseServeArgs(['--prot', '1'])).toThrow(/Unknown option '--prot'/);
    expect(() => loadConfig({ env: {}, flags: parseServeArgs(['--no-auth', '--api-key', 'k-123456789']).flags })).toThrow(/contradict/);
  });

  it('grove help serve names every default (none is a bare "-": recordings, API key)', async () => {
    const io = capture();
    expect(await main(['help', 'serve'], io)).toBe(0);
    expect(io.outText).not.toMatch(/default -\s*$/m);
    expect(io.outText).toMatch(/recordingsDir\s+GROVE_RECORDINGS_DIR\s+default <dataDir>\/recordings/);
  });
});
