import { describe, expect, it } from 'vitest';
import { classifyUpstreamError } from '../../browser-env/network-gate.ts';

describe('classifyUpstreamError', () => {
  it.each([
    [{ code: 'ENOTFOUND' }, 'dns_error'],
    [{ code: 'EAI_AGAIN' }, 'dns_error'],
    [{ code: 'ECONNREFUSED' }, 'connection_refused'],
    [{ code: 'ENETUNREACH' }, 'connection_refused'],
    [{ code: 'ECONNRESET' }, 'connection_reset'],
    [{ code: 'EPIPE' }, 'connection_reset'],
    [{ code: 'ETIMEDOUT' }, 'timeout'],
    // Happy-eyeballs failures arrive as an AggregateError without a code of its own.
    [{ errors: [{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }] }, 'connection_refused'],
    [new Error('socket hang up'), 'connection_reset'],
  ])('%j is %s', (err, expected) => {
    expect(classifyUpstreamError(err)).toBe(expected);
  });
});
