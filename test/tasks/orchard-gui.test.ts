// The Orchard-GUI training-task loader on a fixture of our own in the published JSONL shape.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadTasks } from '../../tasks/index.ts';

const FILE = fileURLToPath(new URL('./fixtures/orchard-gui.jsonl', import.meta.url));

describe('orchard-gui loader', () => {
  it('loads the WebGym-filtered rows as tasks and reports the unusable one', async () => {
    const { tasks, issues } = await loadTasks('orchard-gui', FILE);
    expect(tasks.map((t) => t.id)).toEqual(['900001', '900002', '900001~2']);
    expect(tasks[0]).toMatchObject({
      suite: 'orchard-gui',
      site: 'library.example.org',
      question: 'Find the opening hours of the public library.',
      start_url: 'https://library.example.org',
      level: '1',
      extra: { benchmark_name: 'grove-fixture', domain: 'Misc.', evaluator_reference: [{ id: 1, facts: ['opening hours of the library are shown'] }] },
    });
    expect(tasks[0].reference).toBeUndefined();
    // a numeric task_id, metadata.start_url preferred over website, definite_answer as the reference
    expect(tasks[1]).toMatchObject({ id: '900002', start_url: 'https://calc.example.org/start', reference: [{ type: 'definite', answer: '144' }] });
    // several start pages: the first opens, all are kept, the row is flagged
    expect(tasks[2].start_url).toBe('https://shop.example.org/a');
    expect(tasks[2].extra.start_urls).toEqual(['https://shop.example.org/a', 'https://shop.example.org/b']);
    expect(tasks[2].flags).toEqual(['several_start_urls', 'duplicate_id:900001']);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ where: 'line 4', id: '900004' });
    expect(issues[0].reason).toMatch(/website/);
  });
});
