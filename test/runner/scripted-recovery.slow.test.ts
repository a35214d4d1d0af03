// The scripted policy's recovery paths run for real (in-process server, real Chromium, fixture pages): the
// return to the top after scrolling down for a target (a scroll the step endpoint accepts), taking a click
// again after its page hung and was reopened, and giving up reported as agent_gave_up, never task_completed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SCROLL_PX } from '../../protocol/action.ts';
import type { Task } from '../../protocol/task.ts';
import { runEpisode } from '../../runner/episode.ts';
import { ScriptedPolicy } from '../../runner/scripted-policy.ts';
import { html, startFixture, type Fixture } from '../browser-env/support.ts';
import { startHarness, type Harness } from './harness.ts';

let h: Harness;
let fx: Fixture;
let hangLoads = 0;
const BTN = 'font-size:24px;padding:10px 20px;margin:20px';
const finish = html(`<button style="${BTN}" onclick="document.title = 'finished'">Finish</button>`, '<script>document.title = "finish page"</script>');

beforeAll(async () => {
  h = await startHarness();
  fx = await startFixture({
    // The target appears at the top only once the page was scrolled to its bottom: found only by going back up.
    '/tall': html(
      `<div id="top"></div><div style="height:3000px">long content</div><p>end</p>
       <script>addEventListener('scroll', () => {
         if (scrollY + innerHeight < document.documentElement.scrollHeight - 2 || document.getElementById('t')) return;
         document.getElementById('top').innerHTML = '<button id="t" style="${BTN}" onclick="location.href=\\'/finish\\'">Hidden target</button>';
       });</script>`,
    ),
    // First load: the click starts a busy loop (the step ends page_unresponsive and the page is reopened on its
    // URL); later loads: the same button opens /finish.
    '/hang': (_req, res) => {
      hangLoads++;
      const js = hangLoads === 1 ? 'setTimeout(() => { while (true) {} }, 100)' : "location.href = '/finish'";
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html(`<button style="${BTN}" onclick="${js}">Go</button>`));
    },
    '/finish': finish,
    '/empty': html('<p>nothing to click here</p>'),
  });
});
afterAll(async () => {
  await fx?.close();
  await h?.close();
});

const task = (path: string, plan: unknown[]): Task => ({ id: path.slice(1), suite: 'offline', site: 'fixture', question: 'q', start_url: fx.url(path), extra: { plan }, flags: [] });
const sandbox = (extra: Record<string, unknown> = {}) => ({ som: true, network: { allow: [`127.0.0.1:${fx.port}`] }, ...extra });
const plan = (first: string) => [{ click: { text: first } }, { click: { text: 'Finish' } }, { answer: 'finished' }];

describe('the scripted policy on real pages', () => {
  it('scrolls down for a missing target, goes back to the top within the schema bound and finds it there', async () => {
    const o = await runEpisode({ env: h.client, task: task('/tall', plan('Hidden target')), sandbox: sandbox(), maxSteps: 20, policy: new ScriptedPolicy({ waitMs: 100 }) });
    const why = JSON.stringify(o.trajectory.map((t) => [t.actions, t.parse_error, t.action_error]));
    expect(o.result.parse_failures, why).toBe(0);
    expect(o.result.termination.reason, why).toBe('task_completed');
    expect(o.result.answer, why).toBe('finished');
    expect(o.result.final_url).toBe(fx.url('/finish'));
    const scrolls = o.trajectory.flatMap((t) => t.actions).filter((a) => a.action === 'scroll');
    expect(scrolls.at(-1)).toMatchObject({ action: 'scroll', dy: -MAX_SCROLL_PX });
    expect(scrolls.length).toBeGreaterThan(1);
  });

  it('clicks again after the page hung and was reopened, instead of looking for the next target forever', async () => {
    hangLoads = 0;
    const o = await runEpisode({
      env: h.client, task: task('/hang', plan('Go')), sandbox: sandbox({ action_timeout_ms: 3000 }), maxSteps: 20, policy: new ScriptedPolicy({ waitMs: 100 }),
    });
    const why = JSON.stringify(o.trajectory.map((t) => [t.actions, t.parse_error, t.action_error]));
    expect(o.trajectory.some((t) => t.action_error?.startsWith('page_unresponsive')), why).toBe(true);
    expect(o.result.termination.reason, why).toBe('task_completed');
    expect(o.result.answer, why).toBe('finished');
    // The click on "Go" ran twice: once into the hang, once again on the reopened page.
    const goClicks = o.trajectory.filter((t) => t.thought?.startsWith('Click "Go"'));
    expect(goClicks.length, why).toBe(2);
  });

  it('reports terminate(failure) as agent_gave_up, not task_completed', async () => {
    const o = await runEpisode({
      env: h.client, task: task('/empty', plan('Not on this page')), sandbox: sandbox(), maxSteps: 20, policy: new ScriptedPolicy({ waitMs: 50, maxScrolls: 1, patience: 1 }),
    });
    expect(o.result.termination.reason).toBe('agent_gave_up');
    expect(o.result.termination.detail).toMatch(/^terminate \(failure\): target "Not on this page" not found at plan step 1$/);
    expect(o.result.answer).toBeUndefined();
    expect(o.result.parse_failures).toBe(0);
  });
});
