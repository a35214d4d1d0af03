// Pure parts of the shell environment: capped output, workspace path mapping, the bubblewrap command line.
import { describe, expect, it } from 'vitest';
import { bwrapArgs } from '../../shell-env/bwrap.ts';
import { CappedOutput } from '../../shell-env/output.ts';
import { mapPath } from '../../shell-env/paths.ts';

describe('CappedOutput', () => {
  it('keeps everything under the limit', () => {
    const o = new CappedOutput(10);
    o.push(Buffer.from('abc'));
    o.push(Buffer.from('defghij'));
    expect([o.text(), o.total, o.truncated]).toEqual(['abcdefghij', 10, false]);
  });

  it('keeps head and tail halves over the limit and marks the dropped middle', () => {
    const o = new CappedOutput(10);
    for (const c of ['0123', '4567', '89ab', 'cdef', 'ghij']) o.push(Buffer.from(c));
    expect(o.total).toBe(20);
    expect(o.truncated).toBe(true);
    expect(o.text()).toBe('01234\n[... 10 bytes truncated ...]\nfghij');
    expect(o.bytes().toString()).toBe('01234fghij');
  });

  it('handles one huge chunk', () => {
    const o = new CappedOutput(6);
    o.push(Buffer.from('x'.repeat(1000) + 'END'));
    expect(o.text()).toBe('xxx\n[... 997 bytes truncated ...]\nEND');
  });
});

describe('mapPath', () => {
  const ws = '/workspace';
  const host = '/data/sb/workspace';
  it('maps absolute and relative paths under the workspace', () => {
    expect(mapPath('/workspace/a/b.py', ws, host)).toEqual({ inside: '/workspace/a/b.py', rel: 'a/b.py', host: '/data/sb/workspace/a/b.py' });
    expect(mapPath('a//b.py', ws, host).inside).toBe('/workspace/a/b.py');
    expect(mapPath('/workspace/', ws, host)).toEqual({ inside: '/workspace', rel: '', host });
    expect(mapPath('.', ws, host).rel).toBe('');
  });

  it.each(['../x', 'a/../../x', '/workspace/../etc/passwd', '/etc/passwd', '/workspacex/a', '/', 'a\0b'])('refuses %j', (p) => {
    expect(() => mapPath(p, ws, host)).toThrow(expect.objectContaining({ code: 'path_not_allowed', status: 400 }));
  });
});

describe('bwrapArgs', () => {
  it('binds the system directories read-only, the workspace read-write, and unshares every namespace', () => {
    const args = bwrapArgs({
      rootfs: '/',
      hostWorkspace: '/data/sb/workspace',
      workspace: '/workspace',
      hostTmp: '/data/sb/disk/tmp',
      hostVarTmp: '/data/sb/disk/var-tmp',
      files: [{ host: '/data/sb/passwd', inside: '/etc/passwd' }],
      command: ['sleep', 'infinity'],
      infoFd: 3,
    });
    const text = args.join(' ');
    expect(text).toMatch(/--ro-bind \/usr \/usr/);
    expect(text).toContain('--bind /data/sb/workspace /workspace');
    expect(text).toContain('--ro-bind /data/sb/passwd /etc/passwd');
    for (const f of ['--unshare-pid', '--unshare-net', '--unshare-ipc', '--die-with-parent', '--cap-drop ALL', '--remount-ro /']) expect(text).toContain(f);
    // Nothing writable from the host but the workspace and the temporary folders (all on the sandbox's own disk);
    // /root and /home are not there at all.
    expect(text).toContain('--bind /data/sb/disk/tmp /tmp');
    expect(text).toContain('--bind /data/sb/disk/var-tmp /var/tmp');
    expect(args.filter((a) => a === '--bind')).toHaveLength(3);
    expect(text).not.toMatch(/ \/root | \/home /);
    expect(args.slice(-3)).toEqual(['--', 'sleep', 'infinity']);
  });
});
