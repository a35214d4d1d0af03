// Every numeric action field is bounded (issue 8, point 5): what used to jam a page is refused at the edge.
import { describe, expect, it } from 'vitest';
import { Action, MAX_SCROLL_NOTCHES, MAX_SCROLL_PX } from '../../protocol/action.ts';

const ok = (a: unknown) => Action.safeParse(a).success;

describe('action bounds', () => {
  it('refuses the scroll that jammed a page, and any non-finite or huge delta', () => {
    expect(ok({ action: 'scroll', dy: 3.4e38 })).toBe(false);
    expect(ok({ action: 'scroll', dx: -1e9 })).toBe(false);
    expect(ok({ action: 'scroll', dy: MAX_SCROLL_PX })).toBe(true);
    expect(ok({ action: 'scroll', dy: MAX_SCROLL_PX + 1 })).toBe(false);
  });

  it('bounds a direction scroll in notches and in px', () => {
    expect(ok({ action: 'scroll', direction: 'down', amount: MAX_SCROLL_NOTCHES })).toBe(true);
    expect(ok({ action: 'scroll', direction: 'down', amount: MAX_SCROLL_NOTCHES + 1 })).toBe(false);
    expect(ok({ action: 'scroll', direction: 'down', amount: MAX_SCROLL_NOTCHES + 1, unit: 'px' })).toBe(true);
    expect(ok({ action: 'scroll', direction: 'down', amount: MAX_SCROLL_PX + 1, unit: 'px' })).toBe(false);
  });

  it('bounds coordinates, tab indexes, labels and waits', () => {
    expect(ok({ action: 'click', x: 1e6, y: 1 })).toBe(false);
    expect(ok({ action: 'drag', x: 1, y: 1, to_x: 1, to_y: -1e6 })).toBe(false);
    expect(ok({ action: 'drag', x: 1, y: 1, to_x: 1, to_y: 1, path: [{ x: Infinity, y: 0 }] })).toBe(false);
    expect(ok({ action: 'switch_tab', index: 1000 })).toBe(false);
    expect(ok({ action: 'close_tab', index: 1e9 })).toBe(false);
    expect(ok({ action: 'click_label', label: 1e7 })).toBe(false);
    expect(ok({ action: 'wait', ms: 60_001 })).toBe(false);
    expect(ok({ action: 'click', x: 640, y: 500 })).toBe(true);
  });

  it('says so in the JSON schema', async () => {
    const { z } = await import('zod');
    const schema = JSON.stringify(z.toJSONSchema(Action));
    expect(schema).toContain(`"maximum":${MAX_SCROLL_PX}`);
    expect(schema).toContain('notches (<= 500');
  });
});
