import { z } from 'zod';
import type { LoaderContext } from './types.ts';

/** A short, readable reason from a zod error: "field: message; field: message". */
export function zodReason(err: z.ZodError): string {
  return err.issues
    .slice(0, 4)
    .map((i) => `${i.path.length ? i.path.join('.') : 'row'}: ${i.message}`)
    .join('; ');
}

/** Host name of a URL without a leading "www.", or the input when it is not a URL. */
export function siteOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return url;
  }
}

/**
 * Ids must be unique within a suite; a repeated id (the older Online-Mind2Web copy reuses 15 task_ids for
 * different tasks) keeps the row usable under `<id>~<n>` with a flag naming the original id.
 */
export function uniqueId(ctx: LoaderContext, id: string, flags: string[]): string {
  const n = (ctx.seenIds.get(id) ?? 0) + 1;
  ctx.seenIds.set(id, n);
  if (n === 1) return id;
  flags.push(`duplicate_id:${id}`);
  return `${id}~${n}`;
}

export const nonEmpty = z.string().trim().min(1);
