// The default name of a Claw-Eval worker image (scripts/claw-eval-image.sh builds it): the tag names the checkout's
// real path (the first 12 hex digits of its sha256), so two checkouts of one folder name (a developer's tree and CI's
// clean clone, whose contents may differ) get two images, never one overwriting the other. scripts/claw-eval-image.sh computes the same name in shell.
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import path from 'node:path';

export function clawEvalImageName(checkout: string): string {
  const dir = realpathSync(checkout);
  const base = path.basename(dir).toLowerCase().replace(/_/g, '-').replace(/[^a-z0-9.-]/g, '');
  return `localhost/grove-claw-eval-${base}:${createHash('sha256').update(dir).digest('hex').slice(0, 12)}`;
}

/** The default name of its sandbox tools' image (the shell pods of its episodes; scripts/claw-eval-image.sh). */
export function clawEvalSandboxImageName(checkout: string): string {
  return clawEvalImageName(checkout).replace('/grove-claw-eval-', '/grove-claw-eval-sandbox-');
}
