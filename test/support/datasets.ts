// Where the real benchmark files are: `../shared/datasets` beside the checkout. A git worktree (helpers work in
// /work/wt/<name>) has none beside it, so the main checkout's sibling is used then (read from the worktree's
// `.git` file: "gitdir: <main>/.git/worktrees/<name>").
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '../..');

function mainCheckout(): string | undefined {
  const dotGit = resolve(REPO, '.git');
  try {
    if (!statSync(dotGit).isFile()) return undefined;
    const m = /^gitdir:\s*(.+?)[\\/]\.git[\\/]worktrees[\\/]/m.exec(readFileSync(dotGit, 'utf8'));
    return m?.[1];
  } catch {
    return undefined;
  }
}

/** The datasets folder (may not exist: tests that need it skip then). */
export const DATASETS: string = (() => {
  const beside = resolve(REPO, '../shared/datasets');
  if (existsSync(beside)) return beside;
  const main = mainCheckout();
  const viaMain = main ? resolve(main, '../shared/datasets') : undefined;
  return viaMain && existsSync(viaMain) ? viaMain : beside;
})();
