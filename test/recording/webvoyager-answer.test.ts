// The agent's answer in a WebVoyager result folder, taken as evaluation/auto_eval.py takes it: from the last
// message only, only after "Action: ANSWER", with its bracket handling.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readEpisode, webVoyagerAnswer } from '../../recording/reader.ts';

const sys = { role: 'system', content: 'You are a web agent.' };
const user = { role: 'user', content: 'Now given a task: Find a kettle  Please interact with https://shop.example/ and get the answer.' };
const said = (content: string) => ({ role: 'assistant', content });

describe('WebVoyager answer extraction (auto_eval.py)', () => {
  it.each([
    ['brackets are taken off', 'Thought: found it.\nAction: ANSWER; [4.6 stars, 181 reviews]', '4.6 stars, 181 reviews'],
    ['no brackets: up to the first "]"', 'Action: ANSWER; The price is [$12] today', 'The price is [$12'],
    ['separators "; " skipped', 'Action: ANSWER;  42', '42'],
    ['multi-line answers run to the end', 'Action: ANSWER; line one\nline two', 'line one\nline two'],
  ])('%s', (_name, last, answer) => {
    expect(webVoyagerAnswer([sys, user, said('Thought: look.\nAction: Click [3]'), last === '' ? said('') : said(last)])).toBe(answer);
  });

  it('only the last message counts, and only with "Action: ANSWER" (case-sensitive)', () => {
    expect(webVoyagerAnswer([sys, user, said('Action: ANSWER; early'), said('Action: Click [2]')])).toBeUndefined();
    expect(webVoyagerAnswer([sys, user, said('action: answer; lower case')])).toBeUndefined();
    expect(webVoyagerAnswer([sys])).toBeUndefined();
  });

  let dir: string | undefined;
  afterAll(async () => dir && rm(dir, { recursive: true, force: true }));
  it('readEpisode uses it for the episode answer', async () => {
    dir = await mkdtemp(join(tmpdir(), 'grove-wv-answer-'));
    const ep = join(dir, 'taskShop--1');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(ep);
    await writeFile(join(ep, 'interact_messages.json'), JSON.stringify([sys, user, said('Action: ANSWER; early'), said('Thought: hm\nAction: ANSWER; [final one]')]));
    expect((await readEpisode(ep)).meta.answer).toBe('final one');
    await writeFile(join(ep, 'interact_messages.json'), JSON.stringify([sys, user, said('Action: ANSWER; early'), said('Action: Scroll [WINDOW]; down')]));
    expect((await readEpisode(ep)).meta.answer).toBeUndefined();
  });
});
