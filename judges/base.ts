// Shared machinery of the LLM judges: image loading, the verdict-level cache, the record written beside the
// episode, and turning any judging problem into a judge_error verdict.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Verdict } from '../protocol/task.ts';
import { imageContent, type ImagePart } from '../vlm-client/client.ts';
import { hashOf, sha256, type JudgeCache } from './cache.ts';
import type { CallRecord, JudgeModel } from './model.ts';
import type { PromptSource } from './prompts.ts';
import { JudgeError, judgeErrorVerdict, type JudgeInput, type ScreenshotRef } from './types.ts';
import { imageMimeOf } from '../protocol/image.ts';

export interface LoadedImage {
  index: number;
  path?: string;
  mime: string;
  bytes: Buffer;
  sha256: string;
}

export const mimeOf = (path: string) => imageMimeOf(path);

/** Read screenshots (bytes win over path). A missing file is a bad_input judge error, not a task failure. */
async function loadImages(refs: ScreenshotRef[]): Promise<LoadedImage[]> {
  return Promise.all(
    refs.map(async (r, index) => {
      let bytes = r.bytes;
      if (!bytes) {
        if (!r.path) throw new JudgeError('bad_input', `screenshot ${index} has neither bytes nor path`);
        try {
          bytes = await readFile(r.path);
        } catch (err) {
          throw new JudgeError('bad_input', `screenshot ${index} cannot be read: ${r.path}`, { cause: err });
        }
      }
      return { index, path: r.path, mime: r.mime, bytes, sha256: sha256(bytes) };
    }),
  );
}

export const imagePart = (img: LoadedImage): ImagePart => imageContent(img.bytes, img.mime);

/**
 * Online-Mind2Web's encode_image: the screenshot re-encoded as JPEG (alpha dropped, the encoder's default quality
 * 75), sent with `detail: "high"`. An image that cannot be decoded is a bad_input judge error.
 */
export async function jpegImagePart(img: LoadedImage): Promise<ImagePart> {
  const { default: sharp } = await import('sharp');
  let jpeg: Buffer;
  try {
    jpeg = await sharp(img.bytes).removeAlpha().jpeg({ quality: 75 }).toBuffer();
  } catch (err) {
    throw new JudgeError('bad_input', `screenshot ${img.index} is not a readable image${img.path ? ` (${img.path})` : ''}: ${(err as Error).message}`, { cause: err });
  }
  return imageContent(jpeg, 'image/jpeg', 'high');
}

interface JudgeRecord {
  judge: string;
  config: Record<string, unknown>;
  /** Which prompt texts were sent: Grove's own, or a user-supplied folder (slots and hashes). */
  prompts: PromptSource;
  model: Record<string, unknown>;
  task: JudgeInput['task'];
  answer?: string;
  actions: string[];
  screenshots: { index: number; path?: string; mime: string; bytes: number; sha256: string }[];
  calls: CallRecord[];
  verdict: Verdict;
  cached: boolean;
  started_at: string;
  finished_at: string;
}

export interface ProtocolContext {
  input: JudgeInput;
  images: LoadedImage[];
  transcript: CallRecord[];
}

/**
 * Run one LLM-judge protocol with the verdict cache and the record. `protocol` returns the verdict for usable
 * inputs and throws JudgeError for judging problems.
 */
export async function runProtocol(opts: {
  name: string;
  config: Record<string, unknown>;
  prompts: PromptSource;
  model?: JudgeModel;
  cache?: JudgeCache;
  input: JudgeInput;
  /** Which task fields the protocol reads (part of the cache key). */
  taskKey: Record<string, unknown>;
  protocol: (ctx: ProtocolContext) => Promise<Verdict>;
}): Promise<Verdict> {
  const { name, input } = opts;
  const started_at = new Date().toISOString();
  const transcript: CallRecord[] = [];
  let images: LoadedImage[] = [];
  let verdict: Verdict;
  let cached = false;
  try {
    images = await loadImages(input.screenshots);
    const key = hashOf({
      kind: 'verdict',
      judge: name,
      config: opts.config,
      prompts: opts.prompts,
      model: opts.model?.identity() ?? null,
      task: opts.taskKey,
      answer: input.answer ?? null,
      actions: input.actions,
      thoughts: input.thoughts ?? null,
      images: images.map((i) => i.sha256),
    });
    const hit = opts.cache ? ((await opts.cache.get(key)) as { verdict?: Verdict; calls?: CallRecord[] } | undefined) : undefined;
    if (hit?.verdict) {
      cached = true;
      verdict = { ...hit.verdict, details: { ...hit.verdict.details, cached: true } };
      transcript.push(...(hit.calls ?? []));
    } else {
      verdict = await opts.protocol({ input, images, transcript });
      if (opts.cache && verdict.outcome !== 'judge_error') await opts.cache.set(key, { verdict, calls: transcript });
    }
  } catch (err) {
    verdict = judgeErrorVerdict(name, err);
  }
  verdict = { ...verdict, details: { ...verdict.details, prompts: opts.prompts.source } };
  const dir = input.recordDir ?? (input.episodeDir ? join(input.episodeDir, 'judge') : undefined);
  if (dir) {
    const record: JudgeRecord = {
      judge: name,
      config: opts.config,
      prompts: opts.prompts,
      model: opts.model?.identity() ?? {},
      task: input.task,
      answer: input.answer,
      actions: input.actions,
      screenshots: images.map((i) => ({ index: i.index, path: i.path, mime: i.mime, bytes: i.bytes.length, sha256: i.sha256 })),
      calls: transcript,
      verdict,
      cached,
      started_at,
      finished_at: new Date().toISOString(),
    };
    const path = join(dir, `${name.replace(/[^\w.-]+/g, '_')}.json`);
    try {
      await writeRecord(path, record);
      verdict = { ...verdict, details: { ...verdict.details, record: path } };
    } catch (err) {
      // The verdict stands; only its record is missing (e.g. a read-only episode folder).
      verdict = { ...verdict, details: { ...verdict.details, record_error: (err as Error).message } };
    }
  }
  return verdict;
}

async function writeRecord(path: string, record: JudgeRecord): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(record, null, 2));
  await rename(tmp, path);
}

/** The last k items (all when k <= 0 or k >= length), order kept. */
export const lastK = <T>(xs: T[], k: number): T[] => (k > 0 && xs.length > k ? xs.slice(xs.length - k) : xs.slice());
