// Episode state (terminated/truncated as the episode loop defines them) and the reward rules.
import { describe, expect, it } from 'vitest';
import { EpisodeConfig } from '../../protocol/episode.ts';
import type { StepResult } from '../../protocol/observation.ts';
import { decideWithoutJudge, formatGate, fromVerdict } from '../../episodes/rewards.ts';
import { EpisodeState } from '../../episodes/state.ts';
import { orchardTurnFormat } from '../../episodes/format-reward.ts';
import { parseTaskFiles } from '../../episodes/catalog.ts';

const obs = { step: 1, url: 'http://a/', title: 't', tabs: [], viewport: { width: 1, height: 1 }, last_action_error: null, events: [], timings: { action: 0, settle: 0, capture: 0, encode: 0, total: 0 } };
const ok = (done = false, answer?: string): StepResult => ({
  observation: obs,
  actions: [{ action: done ? { action: 'answer', text: answer ?? '' } : { action: 'wait', ms: 1 }, error: null, ms: 1 }],
  done,
  ...(answer === undefined ? {} : { answer }),
});
const unparsed: StepResult = { observation: obs, actions: [], done: false, parse: { ok: false, format: 'qwen3vl', error: 'no tool call' } };
const cfg = (c: object = {}) => EpisodeConfig.parse(c);

describe('EpisodeState', () => {
  it('terminates on an answer and keeps it', () => {
    const s = new EpisodeState(cfg({ max_steps: 5 }));
    expect(s.record(ok(), {})).toEqual({ terminated: false, truncated: false });
    expect(s.record(ok(true, '42'), {})).toEqual({ terminated: true, truncated: false });
    expect(s.answer).toBe('42');
    expect(s.termination).toEqual({ reason: 'task_completed' });
    // a step after the end does not change how it ended
    expect(s.record(ok(), {})).toEqual({ terminated: true, truncated: false });
  });

  it('terminates after N parse failures in a row; a parsed step resets the count', () => {
    const s = new EpisodeState(cfg({ max_consecutive_parse_failures: 2 }));
    s.record(unparsed, {});
    s.record(ok(), {});
    expect(s.record(unparsed, {}).terminated).toBe(false);
    expect(s.record(unparsed, {})).toEqual({ terminated: true, truncated: false });
    expect(s.termination?.reason).toBe('consecutive_parse_failures');
    expect(s.parseFailures).toBe(3);
  });

  it('truncates at max_steps (parse failures count as steps); no limit, no truncation', () => {
    const s = new EpisodeState(cfg({ max_steps: 2 }));
    s.record(unparsed, {});
    expect(s.record(ok(), {})).toEqual({ terminated: false, truncated: true });
    expect(s.termination?.reason).toBe('max_steps_exhausted');
    const free = new EpisodeState(cfg());
    for (let i = 0; i < 50; i++) expect(free.record(ok(), {}).truncated).toBe(false);
  });

  it('an environment failure ends the episode as env_error', () => {
    const s = new EpisodeState(cfg());
    s.failEnv('browser crashed');
    expect(s.termination).toEqual({ reason: 'env_error', detail: 'browser crashed' });
    expect(s.envError).toBe('browser crashed');
  });
});

describe('reward rules', () => {
  const success = { judge: 'j', outcome: 'success' as const, score: 1 };
  const failure = { judge: 'j', outcome: 'failure' as const, score: 0 };
  const broken = { judge: 'j', outcome: 'judge_error' as const, reasoning: 'timeout' };

  it('grove: always the judge; a judge error is null + judge_error, never 0', () => {
    expect(decideWithoutJudge({ rules: 'grove', termination: { reason: 'consecutive_parse_failures' }, completed: false })).toBe('judge');
    expect(fromVerdict('grove', success)).toEqual({ reward: 1, dropped: false, judge_error: null });
    expect(fromVerdict('grove', failure)).toEqual({ reward: 0, dropped: false, judge_error: null });
    expect(fromVerdict('grove', broken)).toEqual({ reward: null, dropped: false, judge_error: 'timeout' });
  });

  it('orchard-gui: −1 on parse failures, 0 when not completed, dropped on env or judge errors', () => {
    const d = (c: Partial<Parameters<typeof decideWithoutJudge>[0]>) =>
      decideWithoutJudge({ rules: 'orchard-gui', termination: null, completed: true, ...c });
    expect(d({ termination: { reason: 'consecutive_parse_failures' }, completed: false })).toEqual({ reward: -1, dropped: false, judge_error: null });
    expect(d({ termination: { reason: 'max_steps_exhausted' }, completed: false })).toEqual({ reward: 0, dropped: false, judge_error: null });
    expect(d({ envError: 'crashed', termination: { reason: 'env_error' } })).toEqual({ reward: null, dropped: true, judge_error: null });
    expect(d({ termination: { reason: 'task_completed' } })).toBe('judge');
    expect(fromVerdict('orchard-gui', broken)).toEqual({ reward: null, dropped: true, judge_error: 'timeout' });
    expect(fromVerdict('orchard-gui', success).reward).toBe(1);
  });
});

describe("Orchard-GUI's per-turn format reward (reward_browser.py _compute_turn_format_reward)", () => {
  const call = '<tool_call>\n{"name": "click", "arguments": {"point_2d": [512, 88]}}\n</tool_call>';

  it('1 for a turn that closes </think> and holds a parsed <tool_call>; 0 otherwise', () => {
    // A thinking model's output starts inside the think block: only the closing tag is needed.
    expect(orchardTurnFormat(`The search box is at the top.\n</think>\n\n${call}`)).toBe(1);
    expect(orchardTurnFormat(`<think>\nlook\n</think>\n${call}\n${call.replace('click', 'write')}<|im_end|>`)).toBe(1);
    expect(orchardTurnFormat(`no think block\n${call}`)).toBe(0);
    expect(orchardTurnFormat('thinking only\n</think>\nI will click the button.')).toBe(0);
    // One block whose JSON does not parse fails the turn, even beside a good one.
    expect(orchardTurnFormat(`x</think>\n${call}\n<tool_call>\n{"name": "click", "arguments": {"point_2d": [1, 2}}\n</tool_call>`)).toBe(0);
    // A block the pattern does not read (no closing brace before the tag) is passed over, as the regex does.
    expect(orchardTurnFormat(`x</think>\n${call}\n<tool_call>\n{"name": "click", "arguments": {</tool_call>`)).toBe(1);
    // A block without a "name" is no call; the tool name itself is not checked against the tool list.
    expect(orchardTurnFormat('x</think>\n<tool_call>\n{"arguments": {}}\n</tool_call>')).toBe(0);
    expect(orchardTurnFormat('x</think>\n<tool_call>\n{"name": "teleport", "arguments": {}}\n</tool_call>')).toBe(1);
    // Server-parsed tool calls (Grove's JSON message form): the calls are parsed; the thought must close </think>.
    const msg = (content: string) => JSON.stringify({ content, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'done', arguments: '{"response":"42"}' } }] });
    expect(orchardTurnFormat(msg('reasoning</think>'))).toBe(1);
    expect(orchardTurnFormat(msg('reasoning'))).toBe(0);
  });

  it('the episode keeps one score per model-text step under orchard-gui rules; the last one gates a judged success', () => {
    const s = new EpisodeState(cfg({ reward_rules: 'orchard-gui' }));
    s.record(ok(), { model_output: `look</think>\n${call}` });
    s.record(unparsed, { model_output: 'I am not sure' });
    s.record(ok(), {}); // an action given directly: no model text, no format score
    s.record(ok(true, '42'), { model_output: 'answer now\n<tool_call>\n{"name": "done", "arguments": {"response": "42"}}\n</tool_call>' });
    expect(s.formatRewards).toEqual([1, 0, 0]);
    const grove = new EpisodeState(cfg());
    grove.record(ok(), { model_output: `look</think>\n${call}` });
    expect(grove.formatRewards).toEqual([]);

    const success = { judge: 'j', outcome: 'success' as const, score: 1 };
    expect(fromVerdict('orchard-gui', success, 1).reward).toBe(1);
    expect(fromVerdict('orchard-gui', success, 0).reward).toBe(0);
    expect(fromVerdict('orchard-gui', { judge: 'j', outcome: 'failure' as const }, 1).reward).toBe(0);
    // A judge's fractional score does not pass through: the recipe's judge reward is SUCCESS 1 / NOT SUCCESS 0.
    expect(fromVerdict('orchard-gui', { judge: 'j', outcome: 'success' as const, score: 0.7 }, 1).reward).toBe(1);
    expect(fromVerdict('grove', success, 0).reward).toBe(1);
  });
});

describe("Orchard-GUI's format gate and parse-failure penalty as reward rules", () => {
  it('last_turn (turn-level samples) reads the last score; every_turn (whole trajectory) needs every turn at 1', () => {
    expect(EpisodeConfig.parse({ reward_rules: 'orchard-gui' })).toMatchObject({ format_reward: 'last_turn', format_failure_penalty: -1 });
    expect(formatGate([0, 1])).toBe(1);
    expect(formatGate([0, 1], 'every_turn')).toBe(0);
    expect(formatGate([1, 1], 'every_turn')).toBe(1);
    expect(formatGate([1, 0])).toBe(0);
    expect(formatGate([], 'every_turn')).toBeUndefined();
    const success = { judge: 'webvoyager', outcome: 'success' as const };
    expect(fromVerdict('orchard-gui', success, formatGate([0, 1], 'every_turn')).reward).toBe(0);
    expect(fromVerdict('orchard-gui', success, formatGate([0, 1], 'last_turn')).reward).toBe(1);
  });
  it('format_failure_penalty sets the reward of an episode ended by parse failures (their knob; 0 turns it off)', () => {
    const c = { rules: 'orchard-gui' as const, termination: { reason: 'consecutive_parse_failures' as const }, completed: false };
    expect(decideWithoutJudge(c)).toEqual({ reward: -1, dropped: false, judge_error: null });
    expect(decideWithoutJudge({ ...c, parseFailurePenalty: 0 })).toEqual({ reward: 0, dropped: false, judge_error: null });
    expect(() => EpisodeConfig.parse({ format_failure_penalty: 1 })).toThrow();
  });
});

describe('task files setting', () => {
  it('reads suite=path pairs', () => {
    expect([...parseTaskFiles(' webvoyager=/a/b.jsonl, orchard-gui=/c=d.jsonl ')]).toEqual([
      ['webvoyager', '/a/b.jsonl'],
      ['orchard-gui', '/c=d.jsonl'],
    ]);
    expect(parseTaskFiles(undefined).size).toBe(0);
  });
});
