// Shell sandboxes under server limits that need a server of their own: the idle reaper (a running command keeps its
// sandbox busy) and the file size limit, each with its own small live server (real bubblewrap and processes).
import { describe, expect, it } from 'vitest';
import { startShellServer } from './support.ts';

describe('shell sandbox lifecycle and size limits', () => {
  it('a running command keeps the sandbox busy (not reaped as idle); once idle it is reaped', async () => {
    const small = await startShellServer({ idleTimeoutSeconds: 1, reaperIntervalMs: 100 });
    try {
      const id = await small.sandbox();
      const job = (await small.call('POST', `/sandboxes/${id}/exec`, { command: 'sleep 3; echo survived', background: true })).json;
      expect((await small.call('GET', `/sandboxes/${id}`)).json.status).toBe('busy');
      const done = (await small.call('GET', `/sandboxes/${id}/jobs/${job.job_id}?wait=30`)).json;
      expect(done.result).toMatchObject({ exit_code: 0, stdout: 'survived\n' });
      // Idle now: the reaper closes it (looked for until it happens, bounded).
      let status = '';
      for (let i = 0; i < 100 && status !== 'closed'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await small.call('GET', `/sandboxes/${id}`)).json.status;
      }
      expect(status).toBe('closed');
    } finally {
      await small.close();
    }
  }, 60_000);

  it('files over shellMaxFileBytes answer 413 both ways', async () => {
    const small = await startShellServer({ shellMaxFileBytes: 2048 });
    try {
      const id = await small.sandbox();
      const up = await small.call('POST', `/sandboxes/${id}/files`, { path: 'big.bin', content: Buffer.alloc(3000).toString('base64') });
      expect([up.status, up.json.error.code]).toEqual([413, 'file_too_large']);
      await small.call('POST', `/sandboxes/${id}/exec`, { command: 'head -c 3000 /dev/zero > big.bin' });
      const down = await small.call('GET', `/sandboxes/${id}/files?path=big.bin`);
      expect([down.status, down.json.error.code]).toEqual([413, 'file_too_large']);
      const ok = await small.call('POST', `/sandboxes/${id}/files`, { path: 'small.bin', content: Buffer.alloc(2048).toString('base64') });
      expect(ok.status).toBe(200);
    } finally {
      await small.close();
    }
  }, 60_000);
});
