import { describe, expect, it } from 'vitest';
import type { ChatMessage, ContentPart } from '../../vlm-client/client.ts';
import { buildContext, ContextManager, estimateImageTokens, estimateTextTokens, type ContextInput, type HistoryStep } from '../../vlm-client/context.ts';

const img = (n: number) => ({ url: `data:image/png;base64,IMG${n}`, width: 280, height: 280 });

function input(steps: number, opts: { text?: string } = {}): ContextInput {
  const history: HistoryStep[] = Array.from({ length: steps }, (_, i) => ({
    step: i + 1,
    observation: `URL: https://shop.test/${i + 1}${opts.text ?? ''}`,
    image: img(i + 1),
    output: `Thought: step ${i + 1}\nAction: click(point='<point>1 2</point>')`,
    thought: `step ${i + 1}`,
    action: `click ${i + 1}`,
  }));
  return { system: 'SYSTEM', task: 'Buy shoes', history, current: { step: steps + 1, text: 'URL: https://shop.test/now', image: img(steps + 1) } };
}

function imageUrls(messages: ChatMessage[]): string[] {
  return messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as ContentPart[]) : [])).flatMap((p) => (p.type === 'image_url' ? [p.image_url.url] : []));
}

function allText(messages: ChatMessage[]): string {
  return messages
    .map((m) => (typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? (m.content as ContentPart[]).map((p) => (p.type === 'text' ? p.text : '<img>')).join('|') : ''))
    .join('\n');
}

describe('estimates', () => {
  it('counts text as chars/4 and images as 28x28 patches', () => {
    expect(estimateTextTokens('abcdefgh')).toBe(2);
    expect(estimateTextTokens('abcdefghi')).toBe(3);
    expect(estimateTextTokens('abcdefgh', 2)).toBe(4);
    expect(estimateImageTokens(1280, 1000)).toBe(46 * 36 + 2);
    expect(estimateImageTokens(280, 280, 14)).toBe(402);
  });
});

describe('buildContext', () => {
  it('keeps only the current screenshot by default and replaces older ones with placeholders', () => {
    const built = buildContext(input(3));
    expect(imageUrls(built.messages)).toEqual(['data:image/png;base64,IMG4']);
    expect(built.images).toBe(1);
    const text = allText(built.messages);
    for (const s of [1, 2, 3]) expect(text).toContain(`[screenshot of step ${s} omitted]`);
    expect(built.messages[0]).toEqual({ role: 'system', content: 'SYSTEM' });
    expect(text).toContain('Task: Buy shoes');
    // Past outputs are replayed as assistant turns.
    expect(built.messages.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([1, 2, 3].map((i) => `Thought: step ${i}\nAction: click(point='<point>1 2</point>')`));
    expect(built.droppedSteps).toBe(0);
  });

  it('keeps the last k screenshots', () => {
    const built = buildContext(input(4), { keepScreenshots: 3 });
    expect(imageUrls(built.messages)).toEqual(['IMG3', 'IMG4', 'IMG5'].map((s) => `data:image/png;base64,${s}`));
    const text = allText(built.messages);
    expect(text).toContain('[screenshot of step 1 omitted]');
    expect(text).toContain('[screenshot of step 2 omitted]');
    expect(text).not.toContain('[screenshot of step 3 omitted]');
  });

  it('sends no image with keepScreenshots 0', () => {
    const built = buildContext(input(2), { keepScreenshots: 0 });
    expect(imageUrls(built.messages)).toEqual([]);
    expect(allText(built.messages)).toContain('[screenshot of step 3 omitted]');
  });

  it('never puts two user messages in a row', () => {
    for (const mode of ['turns', 'summary'] as const) {
      const built = buildContext(input(3), { history: mode });
      for (let i = 1; i < built.messages.length; i++) {
        expect(built.messages[i].role === 'user' && built.messages[i - 1].role === 'user').toBe(false);
      }
      expect(built.messages[built.messages.length - 1].role).toBe('user');
    }
  });

  it('drops the oldest steps to respect the token budget', () => {
    const long = ` ${'x'.repeat(2000)}`; // ~500 tokens per step observation
    const unbounded = buildContext(input(10, { text: long }), { imageTokens: 100 });
    expect(unbounded.estimatedTokens).toBeGreaterThan(5000);
    const built = buildContext(input(10, { text: long }), { imageTokens: 100, maxTokens: 2000 });
    expect(built.estimatedTokens).toBeLessThanOrEqual(2000);
    expect(built.overBudget).toBe(false);
    expect(built.droppedSteps).toBeGreaterThan(5);
    const text = allText(built.messages);
    expect(text).toContain(`[${built.droppedSteps} earlier steps omitted]`);
    // The newest step survives, the oldest is gone; the current observation and task are always there.
    expect(text).toContain('https://shop.test/10 ');
    expect(text).not.toContain('https://shop.test/1 ');
    expect(text).toContain('https://shop.test/now');
    expect(text).toContain('Task: Buy shoes');
  });

  it('counts images with the configured cost', () => {
    const a = buildContext(input(0), { imageTokens: 10 });
    const b = buildContext(input(0), { imageTokens: 1010 });
    expect(b.estimatedTokens - a.estimatedTokens).toBe(1000);
    const c = buildContext(input(0), { imageTokens: (w, h) => w + h });
    expect(c.estimatedTokens - a.estimatedTokens).toBe(560 - 10);
    const d = buildContext(input(0), { patchSize: 14 });
    expect(d.estimatedTokens - a.estimatedTokens).toBe(402 - 10);
  });

  it('reports overBudget when even the current observation does not fit', () => {
    const built = buildContext(input(3), { maxTokens: 50, imageTokens: 1000 });
    expect(built.droppedSteps).toBe(3);
    expect(built.overBudget).toBe(true);
    expect(imageUrls(built.messages)).toEqual(['data:image/png;base64,IMG4']);
  });

  it('summary history lists thoughts and actions as text', () => {
    const steps = input(2);
    steps.history[1].feedback = 'the click did nothing';
    const built = buildContext(steps, { history: 'summary' });
    expect(built.messages).toHaveLength(2);
    expect(built.messages.some((m) => m.role === 'assistant')).toBe(false);
    const text = allText(built.messages);
    expect(text).toContain('Previous steps:\nStep 1: thought: step 1 action: click 1\nStep 2: thought: step 2 action: click 2 (the click did nothing)');
    expect(imageUrls(built.messages)).toEqual(['data:image/png;base64,IMG3']);
  });

  it('limits history with maxHistorySteps', () => {
    const built = buildContext(input(5), { maxHistorySteps: 2 });
    expect(built.droppedSteps).toBe(3);
    expect(built.messages.filter((m) => m.role === 'assistant')).toHaveLength(2);
    expect(allText(built.messages)).toContain('[3 earlier steps omitted]');
  });

  it('does not modify its input', () => {
    const inp = input(3);
    const copy = structuredClone(inp);
    buildContext(inp, { maxTokens: 100 });
    expect(inp).toEqual(copy);
  });
});

describe('ContextManager', () => {
  it('records steps, annotates the last one and resets on start', () => {
    const cm = new ContextManager({ keepScreenshots: 2 });
    cm.start('S', 'T');
    cm.record({ step: 1, output: 'a', image: img(1) });
    cm.annotateLast('parse failed');
    expect(cm.history[0].feedback).toBe('parse failed');
    const built = cm.build({ step: 2, image: img(2) });
    expect(imageUrls(built.messages)).toHaveLength(2);
    expect(allText(built.messages)).toContain('Feedback on step 1: parse failed');
    cm.start('S2', 'T2');
    expect(cm.history).toHaveLength(0);
    expect(cm.build({ step: 1 }).messages[0]).toEqual({ role: 'system', content: 'S2' });
  });
});
