// Orchard Env's quantities and documents mapped to and from Grove's.
import { describe, expect, it } from 'vitest';
import { jobDoc, parseCpu, parseMemoryMb, sandboxDoc } from '../../server/orchard/convert.ts';

describe('Orchard conversions', () => {
  it('reads Kubernetes CPU and memory quantities', () => {
    expect([parseCpu('4'), parseCpu('2000m'), parseCpu('0.5'), parseCpu('x'), parseCpu('0')]).toEqual([4, 2, 0.5, null, null]);
    expect([parseMemoryMb('16Gi'), parseMemoryMb('512Mi'), parseMemoryMb('1G'), parseMemoryMb('2T'), parseMemoryMb('lots')]).toEqual([
      16384, 512, 953, 1907348, null,
    ]);
  });

  it('maps statuses: creating → pending, ready → ready, error → failed (with the cause)', () => {
    const base = {
      sandbox_id: 'x', type: 'shell' as const, created_at: '2026-01-01T00:00:00.000Z', last_used_at: '', expires_at: null, steps: 0, labels: {},
    };
    const meta = { image: 'img', block_network: true, cpu: '1', memory: '1Gi', timeout: 60 };
    expect(sandboxDoc({ ...base, status: 'creating', error: null }, meta)).toMatchObject({ status: 'pending', ready: false, created_at: 1767225600 });
    expect(sandboxDoc({ ...base, status: 'ready', error: null }, meta)).toMatchObject({ status: 'ready', ready: true, image: 'img' });
    expect(sandboxDoc({ ...base, status: 'error', error: { code: 'internal_error', message: 'no bwrap' } }, meta)).toMatchObject({
      status: 'failed',
      status_message: 'internal_error: no bwrap',
    });
  });

  it('maps jobs: exit 0 succeeds, anything else fails, a timeout says so', () => {
    const job = { job_id: 'j', sandbox_id: 's', command: ['echo', 'a'], status: 'finished' as const, created_at: '2026-01-01T00:00:00.000Z', finished_at: '2026-01-01T00:00:01.000Z' };
    const result = { exit_code: 0, timed_out: false, signal: null, stdout: 'a\n', stderr: '', stdout_bytes: 2, stderr_bytes: 0, truncated: { stdout: false, stderr: false }, merged: false, duration_ms: 1 };
    expect(jobDoc({ ...job, result })).toMatchObject({ status: 'succeeded', command: 'echo a', exit_code: 0, completed_at: 1767225601, error: null });
    expect(jobDoc({ ...job, result: { ...result, exit_code: 124, timed_out: true } })).toMatchObject({ status: 'failed', exit_code: 124 });
    expect(jobDoc({ ...job, result: { ...result, exit_code: 124, timed_out: true } }).error).toMatch(/timed out/);
    expect(jobDoc({ ...job, status: 'running', finished_at: null, result: null })).toMatchObject({ status: 'running', exit_code: null, stdout: '' });
  });
});
