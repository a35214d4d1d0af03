// SWE instances for the runner: the fixture repository's, or a SWE-bench file read by the tasks loader.
import { fixtureInstances } from '../../swe-env/fixture.ts';
import type { SweInstance } from '../../swe-env/types.ts';
import { loadTasks } from '../../tasks/index.ts';

export async function loadSweInstances(o: { fixture: boolean; file?: string; ids?: string[]; limit?: number }): Promise<SweInstance[]> {
  let all: SweInstance[];
  if (o.fixture) all = await fixtureInstances();
  else {
    const res = await loadTasks('swe-bench', o.file!);
    all = res.tasks.map((t) => {
      const x = t.extra as Record<string, unknown>;
      return {
        instance_id: t.id,
        repo: String(x.repo ?? t.site),
        base_commit: String(x.base_commit),
        problem_statement: t.question,
        patch: typeof x.patch === 'string' ? x.patch : undefined,
        test_patch: typeof x.test_patch === 'string' ? x.test_patch : undefined,
        FAIL_TO_PASS: x.FAIL_TO_PASS as string[],
        PASS_TO_PASS: (x.PASS_TO_PASS as string[] | undefined) ?? [],
        version: x.version as string | undefined,
        ...(typeof x.environment_setup_commit === 'string' ? { environment_setup_commit: x.environment_setup_commit } : {}),
        ...(typeof x.image === 'string' ? { image: x.image } : {}),
        ...(typeof x.eval_script === 'string' ? { eval_script: x.eval_script } : {}),
      };
    });
  }
  let out = o.ids ? all.filter((i) => o.ids!.includes(i.instance_id)) : all;
  if (o.ids) {
    const unknown = o.ids.filter((id) => !all.some((i) => i.instance_id === id));
    if (unknown.length) throw new Error(`unknown instance ids: ${unknown.join(', ')}`);
  }
  if (o.limit) out = out.slice(0, o.limit);
  if (out.length === 0) throw new Error('no instances selected');
  return out;
}
