// Browser sandbox routes: step (canonical actions or raw model output), observation, screenshot, downloads.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { DownloadList, DownloadParams, ObservationQuery, ResetRequest, SandboxIdParams, StepRequest } from '../../protocol/api.ts';
import { GroveError } from '../../protocol/errors.ts';
import { Observation, StepResult } from '../../protocol/observation.ts';
import { SandboxInfo } from '../../protocol/sandbox.ts';
import { checkStartUrl } from '../../browser-env/url-policy.ts';
import { screenshotAnswer } from '../screenshot-answer.ts';
import { missingCapture } from '../capture-contract.ts';
import { runBrowserStep } from '../browser-step.ts';
import { defineRoute } from '../route.ts';
import { browserSandbox, errorResponses } from './common.ts';

const BINARY_ALTERNATIVE = {
  'multipart/mixed': 'screenshot "binary": part 1 application/json (this body without screenshot.base64), part 2 the image bytes',
};

const step = defineRoute({
  id: 'step',
  method: 'POST',
  url: '/sandboxes/:id/step',
  summary: 'Execute actions and return the observation',
  description:
    'Give exactly one of `action`, `actions` (run in order, stopping at the first error) or `model_output` + `format` ' +
    '(raw policy output parsed on the server). An action that fails answers 200 with `observation.last_action_error`; ' +
    'unparseable model output answers 200 with `parse.ok = false` and an observation, and executes nothing. ' +
    'Steps in one sandbox are sequential: an overlapping step answers 409 sandbox_busy. A screenshot that could not be ' +
    'captured within the step\'s deadline answers 503 capture_timeout (Retry-After; `error.details` says what the actions ' +
    'did): observe again, do not resend. With `screenshot: "binary"` ' +
    'the answer is multipart/mixed: this JSON body without `observation.screenshot.base64`, then the image bytes.',
  tags: ['browser'],
  params: SandboxIdParams,
  body: StepRequest,
  bodyErrorCode: (path) => (path[0] === 'action' || path[0] === 'actions' ? 'invalid_action' : 'invalid_request'),
  responses: { 200: { description: 'Step result', schema: StepResult, alternatives: BINARY_ALTERNATIVE }, ...errorResponses(400, 401, 403, 404, 409, 410, 503) },
  async handler({ params, body, reply, ctx }) {
    const answer = screenshotAnswer(body.screenshot);
    const result = await runBrowserStep(ctx, params.id, body, answer.capture);
    return answer.send(reply, result, result.observation);
  },
});

const reset = defineRoute({
  id: 'resetSandbox',
  method: 'POST',
  url: '/sandboxes/:id/reset',
  summary: 'Start a new episode in the same browser sandbox',
  description:
    'Gives the sandbox a fresh browser context (no cookies, storage, history, tabs or downloads from before; a warm ' +
    'one when the sandbox has the default look), applies `network` and opens `start_url` (both default to the current ' +
    'ones); the step count starts again at 0. Answers when the start page is open; a failing start URL is reported in ' +
    '`error` and in the first observation, as at creation. A `start_url` whose scheme no sandbox may open (file:, ' +
    'chrome:, javascript:…) answers 400 navigation_blocked, as at creation, and leaves the sandbox as it was. ' +
    'A recorded sandbox (record: true) cannot be reset (400).',
  tags: ['browser'],
  params: SandboxIdParams,
  body: ResetRequest,
  responses: { 200: { description: 'Sandbox info after the reset', schema: SandboxInfo }, ...errorResponses(400, 401, 403, 404, 409, 410) },
  async handler({ params, body, ctx }) {
    // Before anything else (even the sandbox lookup): a refused URL costs the sandbox nothing.
    checkStartUrl(body.start_url);
    const sb = browserSandbox(ctx, params.id);
    // One recorded sandbox is one episode directory: a new episode needs a new sandbox.
    if (sb.options.record) {
      throw new GroveError('invalid_request', 'A recorded sandbox (record: true) is one episode; create a new sandbox for the next episode instead of resetting it.');
    }
    try {
      await sb.reset(body);
      // A new episode in the same sandbox: terminated / truncated and the step count start again.
      ctx.episodes.restart(params.id);
    } finally {
      ctx.registry.touch(params.id);
    }
    return ctx.registry.info(params.id);
  },
});

const observation = defineRoute({
  id: 'observation',
  method: 'GET',
  url: '/sandboxes/:id/observation',
  summary: 'Observe the current state without acting',
  description: 'With `screenshot=binary` the answer is multipart/mixed: the observation JSON without `screenshot.base64`, then the image bytes.',
  tags: ['browser'],
  params: SandboxIdParams,
  query: ObservationQuery,
  responses: { 200: { description: 'Observation', schema: Observation, alternatives: BINARY_ALTERNATIVE }, ...errorResponses(400, 401, 403, 404, 409, 410, 503) },
  async handler({ params, query, reply, ctx }) {
    const sb = browserSandbox(ctx, params.id);
    const answer = screenshotAnswer(query.screenshot);
    const obs = await sb.observe({ screenshot: answer.capture, som: query.som, accessibility: query.accessibility, som_overlay: query.som_overlay });
    const missing = missingCapture(answer.capture !== 'none', obs);
    if (missing) {
      ctx.registry.admission?.observeCaptureMiss(ctx.registry.liveCount());
      throw missing;
    }
    return answer.send(reply, obs, obs);
  },
});

const screenshot = defineRoute({
  id: 'screenshot',
  method: 'GET',
  url: '/sandboxes/:id/screenshot',
  summary: 'The current screenshot as image bytes (sandbox format, after resize)',
  tags: ['browser'],
  params: SandboxIdParams,
  responses: {
    200: { description: 'Image bytes; X-Image-Width / X-Image-Height give its size', contentType: 'image/*' },
    ...errorResponses(401, 403, 404, 409, 410, 503),
  },
  async handler({ params, reply, ctx }) {
    const sb = browserSandbox(ctx, params.id);
    const shot = await sb.screenshot();
    reply.header('content-type', shot.mime).header('x-image-width', String(shot.width)).header('x-image-height', String(shot.height));
    return reply.send(shot.bytes);
  },
});

const listDownloads = defineRoute({
  id: 'listDownloads',
  method: 'GET',
  url: '/sandboxes/:id/downloads',
  summary: 'Files the page downloaded',
  tags: ['browser'],
  params: SandboxIdParams,
  responses: { 200: { description: 'Downloads', schema: DownloadList }, ...errorResponses(401, 403, 404, 409, 410) },
  async handler({ params, ctx }) {
    const sb = browserSandbox(ctx, params.id);
    await sb.syncDownloads?.();
    return { downloads: sb.downloads() };
  },
});

/** RFC 6266 Content-Disposition with an ASCII fallback and the UTF-8 name. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

const getDownload = defineRoute({
  id: 'getDownload',
  method: 'GET',
  url: '/sandboxes/:id/downloads/:download_id',
  summary: 'The bytes of one downloaded file',
  tags: ['browser'],
  params: DownloadParams,
  responses: {
    200: { description: 'File bytes', contentType: 'application/octet-stream' },
    ...errorResponses(401, 403, 404, 409, 410),
  },
  async handler({ params, reply, ctx }) {
    const sb = browserSandbox(ctx, params.id);
    await sb.syncDownloads?.();
    const info = sb.downloads().find((d) => d.id === params.download_id);
    // A browser elsewhere (a kubernetes worker) streams the bytes through this process, never buffered whole.
    const remote = info && sb.openDownload ? await sb.openDownload(info.id) : undefined;
    if (info && remote) {
      reply.header('content-type', 'application/octet-stream').header('content-disposition', contentDisposition(info.filename));
      if (remote.size !== null) reply.header('content-length', String(remote.size));
      return reply.send(remote.stream);
    }
    const file = info ? sb.downloadPath(info.id) : undefined;
    if (!info || !file) throw new GroveError('download_not_found', `No download "${params.download_id}" in sandbox ${params.id}.`);
    const st = await stat(file).catch(() => null);
    if (!st?.isFile()) {
      throw new GroveError('download_not_found', `Download "${params.download_id}" has no saved file${info.failure ? ` (${info.failure})` : ''}.`);
    }
    reply
      .header('content-type', 'application/octet-stream')
      .header('content-length', String(st.size))
      .header('content-disposition', contentDisposition(info.filename));
    return reply.send(createReadStream(file));
  },
});

export const browserRoutes = [step, reset, observation, screenshot, listDownloads, getDownload];
