// Orchard-GUI's env-server wire values ↔ Grove's. Shapes from MSR-Orchard/slime examples/orchard_gui/env/
// (docker_server/env_server.py, clients/remote_env.py, web_env.py; read, not copied):
// - /reset {task_id, task_data: {start_url, ...}, env_config: {width, height, dpr, max_retries, wait_timeout,
//   resize_output_coords, resize_scale, image_patch_size}, tool_list, policy}
// - observations {screenshot (PNG base64), a11ytree (clickable elements, bbox normalised to 0..1), screen_size
//   [w, h], all_tab_url [{index, url, title, active}], active_tab_url}
// - /step {actions: [{name, args}]} → {observation, reward, terminated, truncated, info: {tool_responses:
//   [{tool_name, tool_response}], env_message, tool_list, policy}}
// Tool calls are parsed by Grove's Orchard-GUI policy format (vlm-client/formats/orchard.ts) after their
// coordinates are put on its 0..1000 grid as env_config says web_env.py reads them.
import { z } from 'zod';
import sharp from 'sharp';
import type { Observation } from '../../protocol/observation.ts';
import type { BrowserCreateInput } from '../../protocol/sandbox.ts';
import { smartResize } from '../../protocol/smart-resize.ts';

export const EnvConfig = z
  .object({
    width: z.number().int().min(200).max(7680).default(1280),
    height: z.number().int().min(200).max(4320).default(1000),
    dpr: z.number().positive().max(4).default(1),
    max_retries: z.number().int().min(1).max(10).default(3),
    /** Playwright's default timeout in web_env (ms). */
    wait_timeout: z.number().min(100).max(600_000).default(30_000),
    resize_output_coords: z.boolean().default(true),
    resize_scale: z.number().default(1000),
    image_patch_size: z.number().int().min(1).max(128).default(32),
    /** Grove extension: steps after which `truncated` is true (Orchard's own server never truncates). */
    max_steps: z.number().int().min(1).max(10_000).optional(),
  })
  .passthrough();
export type EnvConfig = z.infer<typeof EnvConfig>;

export const ResetBody = z.object({
  task_id: z.string().min(1).max(500),
  task_data: z.object({ start_url: z.string().min(1).max(8192) }).passthrough(),
  env_config: EnvConfig,
  tool_list: z.array(z.record(z.string(), z.unknown())).default([]),
  policy: z.string().default(''),
});
export type ResetBody = z.infer<typeof ResetBody>;

export const ToolCall = z.object({ name: z.string().min(1).max(100), args: z.record(z.string(), z.unknown()).default({}) }).passthrough();
export type ToolCall = z.infer<typeof ToolCall>;
export const StepBody = z.object({ actions: z.array(ToolCall).max(64), env_id: z.number().optional() }).passthrough();

/** The CSS viewport web_env renders at (screen size / dpr). */
function cssSize(c: EnvConfig): { width: number; height: number } {
  return { width: Math.floor(c.width / c.dpr), height: Math.floor(c.height / c.dpr) };
}

/** The Grove sandbox for an Orchard-GUI reset: its viewport, PNG screenshots, SoM (the a11ytree), the start page. */
export function sandboxFor(body: ResetBody, env: string): BrowserCreateInput {
  const starts = body.task_data.start_url.split(' |AND| ');
  const hosts = starts.flatMap((u) => {
    try {
      return [new URL(u).host];
    } catch {
      return [];
    }
  });
  return {
    type: 'browser',
    viewport: cssSize(body.env_config),
    // web_env renders at device scale `dpr`: the PNG is width × height px of a page laid out at width/dpr CSS px.
    ...(body.env_config.dpr > 1 ? { device_scale_factor: body.env_config.dpr } : {}),
    start_url: starts[0],
    screenshot_format: 'png',
    som: true,
    action_timeout_ms: Math.round(Math.min(120_000, body.env_config.wait_timeout)),
    // web_env waits up to 5 s for network idle after each action.
    settle_max_ms: 5000,
    // The trainer named the start page: it is reachable even when it is a loopback or private host.
    network: { allow: hosts },
    labels: { orchard_gui_env: env.slice(0, 200), task: body.task_id.slice(0, 200) },
  };
}

/** The grid size a model's coordinate is on (web_env: resize_scale, or Qwen's smart resize of the screen). */
function grid(c: EnvConfig): { w: number; h: number } | null {
  if (!c.resize_output_coords) return null;
  if (c.resize_scale > 0) return { w: c.resize_scale, h: c.resize_scale };
  const s = smartResize(c.width, c.height, c.image_patch_size, 4 * 28 * 28, 16384 * 28 * 28);
  return { w: s.width, h: s.height };
}

const POINT_KEYS = ['point_2d', 'start_point_2d', 'end_point_2d'];

/** The call with its points on the orchard format's 0..1000 grid over the viewport, as web_env maps them to CSS px. */
export function onGrid(call: ToolCall, c: EnvConfig): ToolCall {
  const g = grid(c);
  const css = cssSize(c);
  const args: Record<string, unknown> = { ...call.args };
  for (const k of POINT_KEYS) {
    const p = args[k];
    if (!Array.isArray(p) || p.length < 2 || typeof p[0] !== 'number' || typeof p[1] !== 'number') continue;
    // web_env: x / dpr, then (when resizing) x / grid_w * screen_w — in CSS px; here as a share of the viewport.
    let x = p[0] / c.dpr;
    let y = p[1] / c.dpr;
    if (g) {
      x = (x / g.w) * c.width;
      y = (y / g.h) * c.height;
    }
    args[k] = [round3((x / css.width) * 1000), round3((y / css.height) * 1000)];
  }
  return { ...call, args };
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

/** One tool call as the orchard format's model text. */
export function callText(call: ToolCall): string {
  return `<tool_call>\n${JSON.stringify({ name: call.name, arguments: call.args })}\n</tool_call>`;
}

/** The call's points in CSS px as web_env converts them before running it (screen px / dpr, then off the grid). */
export function cssPoints(call: ToolCall, c: EnvConfig): Record<string, [number, number]> {
  const g = grid(c);
  const out: Record<string, [number, number]> = {};
  for (const k of POINT_KEYS) {
    const p = call.args[k];
    if (!Array.isArray(p) || p.length < 2 || typeof p[0] !== 'number' || typeof p[1] !== 'number') continue;
    let x = p[0] / c.dpr;
    let y = p[1] / c.dpr;
    if (g) {
      x = (x / g.w) * c.width;
      y = (y / g.h) * c.height;
    }
    out[k] = [x, y];
  }
  return out;
}

/** The screenshot at the screen size: web_env renders at device scale `dpr`, so its PNG is width × height pixels
 * while the page lays out at width/dpr × height/dpr CSS px. The sandbox renders at that device scale too; only
 * where the CSS size was rounded (a screen size not divisible by dpr) or dpr < 1 is the capture scaled (Lanczos)
 * to the screen size, so the image, `screen_size` and the model's coordinates agree. */
async function screenPng(obs: Observation, c: EnvConfig): Promise<string> {
  const b64 = obs.screenshot?.base64 ?? '';
  if (!b64 || (obs.screenshot?.width === c.width && obs.screenshot?.height === c.height)) return b64;
  const png = await sharp(Buffer.from(b64, 'base64')).resize(c.width, c.height, { fit: 'fill', kernel: 'lanczos3' }).png().toBuffer();
  return png.toString('base64');
}

/** Orchard-GUI's observation of a Grove observation (screenshot PNG base64; a11ytree from the SoM list). */
export async function observationOf(obs: Observation, c: EnvConfig) {
  const css = cssSize(c);
  const a11ytree = (obs.som ?? []).map((e) => ({
    tag: e.tag,
    ...(e.role ? { role: e.role } : {}),
    ...(e.type ? { type: e.type } : {}),
    textContent: e.text,
    bbox: [e.x / css.width, e.y / css.height, (e.x + e.width) / css.width, (e.y + e.height) / css.height],
  }));
  const active = obs.tabs.find((t) => t.active);
  return {
    screenshot: await screenPng(obs, c),
    a11ytree,
    screen_size: [c.width, c.height],
    all_tab_url: obs.tabs.map((t) => ({ index: t.index, url: t.url, title: t.title.slice(0, 50), active: t.active })),
    active_tab_url: active?.url ?? obs.url,
  };
}
