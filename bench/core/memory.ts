// Block 3: memory per idle session, the PSS of the server's Chromium tree with 16 idle sessions against none.
import { chromiumPidsUnder, pssKb } from './procfs.ts';
import { api, type Server } from './server.ts';
import { r2, sleep, type Report } from './stats.ts';

export async function memoryBlock(s: Server, ids: string[], { results, say }: Report): Promise<void> {
  const pssWith = chromiumPidsUnder(s.proc.pid!).reduce((a, p) => a + pssKb(p), 0);
  await Promise.all(ids.map((sid) => api(s, 'DELETE', `/sandboxes/${sid}`)));
  await sleep(1500); // let renderers exit before sampling the empty tree
  const pssWithout = chromiumPidsUnder(s.proc.pid!).reduce((a, p) => a + pssKb(p), 0);
  results.mem_per_session_mb = r2((pssWith - pssWithout) / 1024 / ids.length);
  results.mem_tree_per_session_mb = r2(pssWith / 1024 / ids.length);
  say(`memory/idle session ${results.mem_per_session_mb} MB marginal PSS (${results.mem_tree_per_session_mb} MB whole tree / ${ids.length}) (target ≤ 100)`);
}
