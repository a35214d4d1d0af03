// `grove judge --preview`: the requests a judge would send for one episode, printed as JSON lines (images by
// mime, size and SHA-256), with no model called and nothing written. The judge runs against a local stand-in for
// the endpoint that answers "(preview)", so the first request of every protocol is exact; requests built from an
// earlier reply (WebJudge's image and outcome stages) show what that placeholder reply shapes.
import type { Suite, Task } from '../../protocol/task.ts';
import type { PromptSet } from '../../judges/prompts.ts';
import type { CommandIO } from '../args.ts';
import { judgeModelConfig, type JudgeModelFlags } from './judge-flags.ts';

export async function previewJudge(o: {
  io: CommandIO;
  suite: Suite;
  episodesDir: string;
  episode?: string;
  tasks?: Map<string, Task>;
  flags: JudgeModelFlags;
  prompts?: PromptSet;
  judgeName: string;
  k?: number;
  scoreThreshold?: number;
}): Promise<number> {
  const [{ createJudge, JudgeModel }, { redactImages }, { judgeInputFromEpisode }, { findEpisodes, readEpisode }] = await Promise.all([
    import('../../judges/index.ts'),
    import('../../judges/model.ts'),
    import('../../judges/episodes.ts'),
    import('../../recording/reader.ts'),
  ]);
  const found = await findEpisodes(o.episodesDir);
  const f = o.episode === undefined ? found[0] : found.find((e) => e.id === o.episode || e.id.endsWith(`/${o.episode}`));
  if (!f) {
    o.io.err(`grove judge: ${o.episode === undefined ? `no episodes found under ${o.episodesDir}` : `no episode ${o.episode} under ${o.episodesDir}`}\n`);
    return 1;
  }
  const bodies: Record<string, unknown>[] = [];
  const standIn: typeof fetch = async (_url, init) => {
    bodies.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
    const reply = { id: 'preview', object: 'chat.completion', created: 0, model: 'preview', choices: [{ index: 0, message: { role: 'assistant', content: '(preview)' }, finish_reason: 'stop' }] };
    return new Response(JSON.stringify(reply), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const model = new JudgeModel({ ...judgeModelConfig(o.flags, undefined), retries: 0, httpRetries: 0 }, { fetch: standIn });
  const judge = createJudge(o.judgeName, { model, k: o.k, scoreThreshold: o.scoreThreshold, prompts: o.prompts });
  const view = await readEpisode(f.dir, f.id);
  const input = { ...judgeInputFromEpisode(view, { suite: o.suite, tasks: o.tasks }), episodeDir: undefined, recordDir: undefined };
  const verdict = await judge.judge(input);
  o.io.err(`preview of ${judge.name} for episode ${f.id}: ${bodies.length} request(s), prompts: ${String(verdict.details?.prompts ?? 'grove')}\n`);
  if (verdict.outcome === 'judge_error') o.io.err(`note: ${verdict.reasoning ?? 'the judge input is not usable'}\n`);
  for (const b of bodies) {
    const { messages, ...rest } = b as { messages: Parameters<typeof redactImages>[0] };
    o.io.out(`${JSON.stringify({ ...rest, messages: redactImages(messages) })}\n`);
  }
  return 0;
}
