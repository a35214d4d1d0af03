// The step card and timeline say what happened: a point is named by its space (the executed css_px point is not
// "raw" model output), the model's own coordinates are shown when the policy printed another space than it executed
// (the scripted policy clicks css_px and prints qwen3vl rel1000), and a step whose actions ran without error but
// whose environment reported a problem is marked apart from a failed action. Real Chromium over a real recording.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelActions, stepErrorKind } from '../../recording/reader.ts';
import { SYNTH_CLICK, writeSyntheticEpisode } from '../../recording/synthetic.ts';
import { startViewer } from '../../viewer/server.ts';

const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];
// The synthetic page is 1280x800 CSS px: the click (770, 170) is rel1000 (601.6, 212.5), written by a model as [602, 213].
const QWEN_CLICK = '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [602, 213]}}\n</tool_call>';
const ENV_ERROR = { code: 'observation_failed', message: 'the title read ran out of time' };

let root: string;
let viewer: Awaited<ReturnType<typeof startViewer>>;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'grove-step-card-'));
  const dir = join(root, 'ep');
  await writeSyntheticEpisode(dir, { episodeId: 'ep', suite: 'offline', site: 'shop', steps: 8, question: 'Buy it' });
  // Step 1 as the scripted policy records it; step 2's actions ran but the observation failed afterwards.
  const file = join(dir, 'steps.jsonl');
  const steps = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  Object.assign(steps[0], { model_output: QWEN_CLICK, format: 'qwen3vl' });
  Object.assign(steps[1], { last_action_error: ENV_ERROR });
  expect(steps[6].actions[0].error).toMatchObject({ code: 'scroll_failed' }); // step 7: a failed action
  await writeFile(file, steps.map((s) => JSON.stringify(s)).join('\n') + '\n');
  viewer = await startViewer({ root, port: 0 });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
});
afterAll(async () => {
  await browser?.close();
  await viewer?.close();
  await rm(root, { recursive: true, force: true });
});

describe('step notes (recording/reader)', () => {
  it('whose error a step shows', () => {
    const ok = { action: { action: 'wait' as const }, error: null, ms: 1 };
    const failed = { ...ok, error: { code: 'scroll_failed', message: 'x' } };
    expect(stepErrorKind({ actions: [ok], last_action_error: null }, 'grove')).toBeNull();
    expect(stepErrorKind({ actions: [failed], last_action_error: failed.error }, 'grove')).toBe('action');
    expect(stepErrorKind({ actions: [ok], parse_error: 'no tool call', last_action_error: null }, 'grove')).toBe('action');
    expect(stepErrorKind({ actions: [ok], last_action_error: ENV_ERROR }, 'grove')).toBe('environment');
    // WebVoyager's trajectories note a failed action on the step: theirs.
    expect(stepErrorKind({ actions: [ok], last_action_error: { code: 'webvoyager_note', message: 'cannot be executed' } }, 'webvoyager')).toBe('action');
  });

  it('the model output parsed in its own space', () => {
    expect(modelActions({ model_output: QWEN_CLICK, format: 'qwen3vl' })).toEqual([{ action: 'click', x: 602, y: 213, space: 'rel1000' }]);
    expect(modelActions({ model_output: 'not a call', format: 'qwen3vl' })).toBeUndefined();
    expect(modelActions({ model_output: '<tool_call>\n{"name": "computer_use", "arguments": {"action": "type", "text": "a"}}\n</tool_call>', format: 'qwen3vl' })).toBeUndefined();
  });
});

describe('the step card and the timeline', () => {
  it('the API carries each step\'s error kind and the model\'s own actions', async () => {
    const ep = await (await fetch(`${viewer.url}api/episode?id=ep`)).json();
    expect(ep.steps.map((s: { error_kind: string | null }) => s.error_kind)).toEqual([null, 'environment', null, null, null, null, 'action', null, null]);
    expect(ep.steps[0].model_actions).toEqual([{ action: 'click', x: 602, y: 213, space: 'rel1000' }]);
    const list = await (await fetch(`${viewer.url}api/episodes`)).json();
    expect(list.items[0].errors).toBe(1); // the failed scroll; the environment problem is not the step's error
  });

  it('names the executed point by its space and shows what the model wrote', async () => {
    await page.goto(`${viewer.url}#/episode?${new URLSearchParams({ id: 'ep', step: '1' })}`);
    const point = page.locator('.side .act .point');
    await point.waitFor();
    expect(await point.textContent()).toBe(`css_px ${SYNTH_CLICK.x}, ${SYNTH_CLICK.y}`);
    expect(await page.locator('.side').textContent()).not.toMatch(/\braw\b/);
    expect(await page.locator('.side .model-wrote').textContent()).toBe('model wrote (qwen3vl): click rel1000 602, 213');
    // A step whose model output is its executed action says nothing more.
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.locator('.side h3').first().textContent()).toBe('Step 2');
    expect(await page.locator('.side .model-wrote').count()).toBe(0);
  });

  it('marks a failed action ✖ and an environment problem after clean actions ⚠, each with its own words', async () => {
    const cell = (n: number) => page.locator(`#timeline .cell[data-step="${n}"]`);
    expect(await cell(7).getAttribute('class')).toMatch(/\berr\b/);
    expect(await cell(7).locator('.flags').textContent()).toBe('✖');
    expect(await cell(2).getAttribute('class')).not.toMatch(/\berr\b/);
    expect(await cell(2).getAttribute('class')).toMatch(/\benv\b/);
    expect(await cell(2).locator('.flags').textContent()).toBe('⚠');
    expect(await cell(2).getAttribute('title')).toContain(`environment (the actions ran): ${ENV_ERROR.message}`);
    expect(await page.locator('.side .env').textContent()).toBe(`environment: ${ENV_ERROR.code}: ${ENV_ERROR.message}`);
  });
});
