// REST wire schemas that are not sandbox/observation shapes themselves: step request, listings, errors.
// Shared by the server (validation + OpenAPI) and the typed client.
import { z } from 'zod';
import { Action, ActionList } from './action.ts';
import { NetworkRules, SandboxInfo } from './sandbox.ts';

/** How the step and observation endpoints return the screenshot (see `server/screenshot-answer.ts`). */
export const ScreenshotMode = z.enum(['base64', 'binary', 'none']);
export type ScreenshotMode = z.infer<typeof ScreenshotMode>;

/** Observation options accepted by the step and observation endpoints. */
const observationOptions = {
  screenshot: ScreenshotMode.optional().describe(
    "'base64' (default) embeds the image; 'binary' answers multipart/mixed: the JSON body without screenshot.base64, " +
      "then the image bytes as a second part (no base64 on the wire); 'none' skips capture",
  ),
  som: z.boolean().optional().describe('override the sandbox Set-of-Mark setting for this observation'),
  accessibility: z.boolean().optional().describe('override the sandbox accessibility-text setting'),
  som_overlay: z.boolean().optional().describe('draw the Set-of-Mark boxes and labels onto the screenshot (needs SoM on)'),
};

/**
 * POST /sandboxes/{id}/step. Exactly one of `action`, `actions` or `model_output` (with `format`).
 * Raw model text is parsed server-side; a parse failure answers 200 with `parse.ok = false`.
 */
export const StepRequest = z
  .object({
    action: Action.optional(),
    actions: ActionList.optional(),
    model_output: z.string().max(500_000).optional().describe('raw policy output (text or JSON of tool calls)'),
    format: z.string().min(1).max(100).optional().describe('policy output format name for model_output'),
    ...observationOptions,
  })
  .strict()
  .superRefine((b, ctx) => {
    const given = (['action', 'actions', 'model_output'] as const).filter((k) => b[k] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `give exactly one of "action", "actions" or "model_output" (got ${given.length ? given.join(' and ') : 'none'})`,
      });
    }
    if (b.model_output !== undefined && b.format === undefined) {
      ctx.addIssue({ code: 'custom', path: ['format'], message: 'required with model_output (a policy output format name)' });
    }
    if (b.format !== undefined && b.model_output === undefined) {
      ctx.addIssue({ code: 'custom', path: ['format'], message: 'only allowed together with model_output' });
    }
  });
export type StepRequest = z.infer<typeof StepRequest>;

/** GET /sandboxes/{id}/observation query. Booleans come as "true"/"false"/"1"/"0". */
const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
export const ObservationQuery = z.object({
  screenshot: ScreenshotMode.optional(),
  som: queryBool.optional(),
  accessibility: queryBool.optional(),
  som_overlay: queryBool.optional(),
});
export type ObservationQuery = z.input<typeof ObservationQuery>;

export const WaitQuery = z.object({
  timeout: z.coerce.number().min(0).max(600).default(30).describe('seconds to wait at most'),
});

export const SandboxIdParams = z.object({ id: z.string().min(1).max(100) });

/** An episode reset of a browser sandbox: fresh context and storage, a new start URL and network rules. */
export const ResetRequest = z
  .object({
    /** The new episode's first page (default: the sandbox's current start_url; none: about:blank). */
    start_url: z.string().max(8192).optional(),
    /** Network rules for the new episode (default: the current ones). */
    network: NetworkRules.optional(),
  })
  .strict();
export type ResetRequest = z.input<typeof ResetRequest>;
export const DownloadParams = z.object({ id: z.string().min(1).max(100), download_id: z.string().min(1).max(200) });

export const SandboxList = z.object({ sandboxes: z.array(SandboxInfo) });

/** GET /sandboxes query: `label=key=value`, repeatable (all must match). */
export const SandboxListQuery = z.object({
  label: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]))
    .pipe(z.array(z.string().regex(/^[^=]+=/, 'expected key=value').max(2000)).max(32))
    .describe('key=value; repeat for several labels (all must match)'),
});
export type SandboxList = z.infer<typeof SandboxList>;

export const DownloadInfo = z.object({
  id: z.string(),
  filename: z.string(),
  size: z.number().int().nonnegative(),
  url: z.string(),
  created_at: z.string(),
  failure: z.string().optional(),
});
export type DownloadInfo = z.infer<typeof DownloadInfo>;

export const DownloadList = z.object({ downloads: z.array(DownloadInfo) });
export type DownloadList = z.infer<typeof DownloadList>;

export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    /** capture_timeout of a step: `executed`, and what its actions did (`actions`, `done`, `answer`), `step`, `url`. */
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export const Health = z.object({
  status: z.enum(['ok', 'shutting_down']),
  version: z.string(),
  uptime_s: z.number(),
  sandboxes: z.number().int(),
});
export type Health = z.infer<typeof Health>;
