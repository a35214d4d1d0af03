// Shared helpers of the exporters.
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import type { EpisodeView, StepView } from '../reader.ts';

export class ExportError extends Error {
  readonly code = 'export_error';
}

/** Reads a frame of an episode (path relative to its directory) and converts it to `format` when asked. */
export async function loadFrame(view: EpisodeView, rel: string, format?: 'png' | 'jpeg' | 'webp'): Promise<Buffer> {
  const bytes = await readFile(join(view.dir, rel));
  if (!format) return bytes;
  const ext = rel.split('.').pop()?.toLowerCase();
  const same = (format === 'png' && ext === 'png') || (format === 'jpeg' && (ext === 'jpg' || ext === 'jpeg')) || (format === 'webp' && ext === 'webp');
  if (same) return bytes;
  return sharp(bytes)[format]().toBuffer();
}

export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** A directory-name-safe version of an id (task ids may contain '/' or spaces). */
export function safeName(id: string): string {
  return id.replace(/[\\/:*?"<>|\x00-\x1f]/g, '_').slice(0, 200) || '_';
}

export const isTerminalStep = (s: StepView) => s.actions.some((a) => a.action.action === 'answer' || a.action.action === 'terminate');

/** The final answer of an episode: meta.answer, else the text of an `answer` action. */
export function finalAnswer(view: EpisodeView): string {
  if (view.meta.answer !== undefined) return view.meta.answer;
  for (const s of [...view.steps].reverse())
    for (const a of s.actions) if (a.action.action === 'answer') return a.action.text;
  return '';
}
