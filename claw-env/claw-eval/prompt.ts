// What the checkout's own code says a trial starts with: the first user message as its loop builds it (the prompt's
// text, then the attachments and media named in it, loaded from DIR by its media loader under its default model and
// media config, with the media_load events it records) and its sandbox tool specs. Both come from Grove's driver.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ClawEvalTask, ClawEvalTool } from './checkout.ts';
import type { ClawEvalBlock } from './grade.ts';
import type { ClawEvalPython } from './pyenv.ts';
import { clawEvalTempDir } from './tmp.ts';

export interface ClawEvalPrompt {
  content: ClawEvalBlock[];
  media_events: Record<string, unknown>[];
}

const ENV = { PATH: '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1' };

function driver(py: ClawEvalPython, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(py.python, args, { cwd, env: ENV, maxBuffer: 256 << 20, timeout: 300_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${args[1]}: ${stderr.slice(-500) || err.message}`)) : resolve(stdout)));
  });
}

/** The first user message of a trial of `task`, built by the checkout's runner/loop.py. */
export async function clawEvalPrompt(task: ClawEvalTask, o: { root: string; python: ClawEvalPython; driver: string }): Promise<ClawEvalPrompt> {
  const dir = clawEvalTempDir('prompt');
  try {
    const out = path.join(dir, 'out.json');
    await driver(o.python, [o.driver, 'prompt', o.root, task.yaml_path, out], o.root);
    return JSON.parse(readFileSync(out, 'utf8')) as ClawEvalPrompt;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The checkout's sandbox tool specs (runner/sandbox_tools.py SANDBOX_TOOLS). */
export async function clawEvalSandboxTools(o: { root: string; python: ClawEvalPython; driver: string }): Promise<ClawEvalTool[]> {
  return JSON.parse(await driver(o.python, [o.driver, 'sandbox_tools', o.root], o.root)) as ClawEvalTool[];
}

/** A Claw-Eval content block list as chat-completions content parts (images as data URLs, as its provider sends them). */
export function chatParts(blocks: ClawEvalBlock[]): ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[] {
  const parts: ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[] = [];
  for (const b of blocks) {
    if (b.type === 'text') parts.push({ type: 'text', text: b.text });
    else if (b.type === 'image') parts.push({ type: 'image_url', image_url: { url: `data:${b.mime_type};base64,${b.data}` } });
  }
  return parts;
}
