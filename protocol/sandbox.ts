// Wire schemas for sandbox creation and listing (shared by server, client, backends).
import { z } from 'zod';
import { CoordinateSpace } from './action.ts';
import { EpisodeConfig, TaskSpec } from './episode.ts';
import { ImageFormat } from './observation.ts';
import { envName, processString, ShellDetails } from './shell.ts';
import { ClawCreateOptions, ClawDetails, ClawEvalDetails } from './claw.ts';

export const NetworkRules = z.strictObject({
  /** Deny everything (the start URL too, unless it is allowed explicitly by `allow`). */
  block_network: z.boolean().default(false),
  /** Hosts or host:port that are opened even when they resolve to loopback/private addresses
   * ("127.0.0.1:8123", "localhost:*", "*.example.com"). */
  allow: z.array(z.string().min(1)).max(256).default([]),
  /** If non-empty, only these domains (and subdomains) may be reached. */
  allow_domains: z.array(z.string().min(1)).max(256).default([]),
  /** These domains (and subdomains) are denied. */
  deny_domains: z.array(z.string().min(1)).max(256).default([]),
});
export type NetworkRules = z.infer<typeof NetworkRules>;

export const ResizeOptions = z.union([
  z.strictObject({ mode: z.literal('max_side'), max_side: z.number().int().min(64).max(8192) }),
  /** Qwen2.5/3-VL smart resize: both sides multiples of `factor`, pixel count within [min_pixels, max_pixels]. */
  z.strictObject({
    mode: z.literal('smart'),
    factor: z.number().int().min(1).max(128).default(32),
    min_pixels: z.number().int().min(1).default(64 * 32 * 32),
    max_pixels: z.number().int().min(1).default(1280 * 32 * 32),
  }),
]);
export type ResizeOptions = z.infer<typeof ResizeOptions>;

/**
 * Options Chromium would refuse only once the context is created (after `201`) are checked here, so a create
 * answers `400` naming the field (issue 8). Node's ICU and Chromium's agree on IANA zone names and BCP 47 tags.
 */
function validTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
function validLocale(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

export const BrowserCreateOptions = z.strictObject({
  type: z.literal('browser'),
  viewport: z
    .strictObject({ width: z.number().int().min(200).max(3840), height: z.number().int().min(200).max(2160) })
    .default({ width: 1280, height: 1000 }),
  /** Device pixels per CSS px (a HiDPI screen): the page lays out at `viewport` CSS px and the screenshot is
   * `viewport × device_scale_factor` image px, rendered at that scale (not upscaled). Default 1. */
  device_scale_factor: z.number().min(1).max(4).optional(),
  start_url: z.string().max(8192).optional(),
  user_agent: z
    .string()
    .max(1000)
    // A header value: no control characters (a newline would end the header).
    .refine((ua) => !/[\u0000-\u001f\u007f]/.test(ua), 'must not contain control characters (newlines, tabs, NUL)')
    .optional(),
  locale: z.string().max(35).refine(validLocale, 'must be a BCP 47 language tag such as "en-US"').optional(),
  timezone: z.string().max(64).refine(validTimezone, 'must be an IANA time zone such as "Europe/Berlin"').optional(),
  screenshot_format: ImageFormat.default('jpeg'),
  screenshot_quality: z.number().int().min(1).max(100).default(80),
  resize: ResizeOptions.optional(),
  /** Frame cache (default: the server's `frameCache` setting, off unless GROVE_FRAME_CACHE=1 or a config file turns it on): while
   * nothing has painted since the last capture (no compositor frame, the same layer tree, nothing animating, no
   * animated image in the document), an observation answers that capture again, marked `timings.cached`
   * (browser-env/frame-cache.ts). `false`: every observation is a capture. */
  frame_cache: z.boolean().optional(),
  coordinate_space: CoordinateSpace.default('css_px'),
  rel_divisor: z.union([z.literal(1000), z.literal(999)]).default(1000),
  /** Settle after actions: wait for the work the action caused (timers, fetches, navigations, ...; see
   * browser-env/settle.ts), then one animation frame. Activity that was running before the action does not count. */
  settle: z.boolean().default(true),
  /** Extra quiet time after the caused work is done (0: none; the frame wait is always there). */
  settle_quiet_ms: z.number().int().min(0).max(5000).default(0),
  settle_max_ms: z.number().int().min(0).max(30_000).default(3000),
  action_timeout_ms: z.number().int().min(100).max(120_000).default(10_000),
  som: z.boolean().default(false),
  accessibility: z.boolean().default(false),
  network: NetworkRules.default({ block_network: false, allow: [], allow_domains: [], deny_domains: [] }),
  ttl_seconds: z.number().int().min(1).max(7 * 86400).optional(),
  idle_timeout_seconds: z.number().int().min(1).max(86400).optional(),
  /** Record the episode to a directory on the server (see recording). */
  record: z.boolean().default(false),
  /** Also record the network traffic into `<episode dir>/network.har` (needs `record`; never a warm context). */
  record_har: z.boolean().default(false),
  /** Serve every request from this HAR (a path on the server inside its recordings directory); requests the
   * HAR does not hold fail instead of reaching the network. */
  replay_har: z.string().min(1).max(4096).optional(),
  labels: z.record(z.string(), z.string()).default({}),
  /** Pair with a Claw sandbox: its origin (only that host:port) is added to `network.allow`, and `start_url`
   * defaults to its login URL. */
  claw_sandbox: z.string().min(1).max(200).optional(),
  /** Run a task: its start URL opens (offline sites: in a fresh session) and POST /sandboxes/{id}/evaluate
   * answers its reward. `start_url` is then not allowed. */
  task: TaskSpec.optional(),
  /** Episode limits and reward rules (terminated / truncated on step answers). */
  episode: EpisodeConfig.optional(),
});
export type BrowserCreateOptions = z.infer<typeof BrowserCreateOptions>;
export type BrowserCreateInput = z.input<typeof BrowserCreateOptions>;

export const ShellCreateOptions = z.strictObject({
  type: z.literal('shell'),
  /** Own empty network namespace (no interface but loopback). false: HTTP(S) egress through a filtering proxy
   * with the browser's deny rules (no loopback, private ranges or metadata unless `allow` opens them). */
  block_network: z.boolean().default(true),
  /** With block_network false: hosts or host:port opened even when they resolve to loopback/private addresses
   * (same syntax as the browser's `network.allow`). */
  allow: z.array(z.string().min(1)).max(256).optional(),
  /** A name looked up in the server's image table (a local root file system); unknown names run on the
   * host's root file system, and the sandbox info says so. */
  image: z.string().min(1).max(512).optional(),
  /** CPU limit in cores (CFS quota). */
  cpu: z.number().min(0.05).max(256).optional(),
  /** Memory limit (cgroup) in MiB. */
  memory_mb: z.number().int().min(16).max(4 * 1024 * 1024).optional(),
  /** Live processes at most (pids cgroup and RLIMIT_NPROC). */
  max_processes: z.number().int().min(8).max(65_536).optional(),
  /** Size in MiB of the sandbox's disk (/workspace, /tmp and /var/tmp together; default: the server's shellDiskMb). */
  disk_mb: z.number().int().min(64).max(1024 * 1024).optional(),
  /** With block_network false: connections to the egress proxy open at once, at most (beyond: 503 and closed;
   * default: the server's shellEgressMaxConnections). */
  egress_max_connections: z.number().int().min(1).max(4096).optional(),
  /** With block_network false: an egress connection with no byte either way for this long is closed, seconds
   * (default: the server's shellEgressIdleTimeoutS). */
  egress_idle_timeout_s: z.number().int().min(1).max(86_400).optional(),
  /** Environment variables every exec starts with (an exec's own `env` adds to them). */
  env: z.record(envName, processString(65_536)).optional(),
  /** Pair with a Claw sandbox: its origin (only that host:port) is opened (network through the proxy), and
   * CLAW_ORIGIN / CLAW_TOKEN are set in the environment. */
  claw_sandbox: z.string().min(1).max(200).optional(),
  ttl_seconds: z.number().int().min(1).max(7 * 86400).optional(),
  idle_timeout_seconds: z.number().int().min(1).max(86400).optional(),
  labels: z.record(z.string(), z.string()).default({}),
});
export type ShellCreateOptions = z.infer<typeof ShellCreateOptions>;

export const CreateSandboxBody = z.discriminatedUnion('type', [BrowserCreateOptions, ShellCreateOptions, ClawCreateOptions]);
export type CreateSandboxBody = z.infer<typeof CreateSandboxBody>;

export const SandboxStatus = z.enum(['creating', 'ready', 'busy', 'closing', 'closed', 'error']);
export type SandboxStatus = z.infer<typeof SandboxStatus>;

export const SandboxInfo = z.object({
  sandbox_id: z.string(),
  type: z.enum(['browser', 'shell', 'claw']),
  status: SandboxStatus,
  created_at: z.string(),
  last_used_at: z.string(),
  expires_at: z.string().nullable(),
  steps: z.number().int(),
  labels: z.record(z.string(), z.string()),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** Shell sandboxes: root file system, network mode and limits actually in force. */
  shell: ShellDetails.optional(),
  /** Claw sandboxes: the apps' own origin, login URL and token. */
  claw: ClawDetails.optional(),
  /** Claw sandboxes of a Claw-Eval task (`claw_eval_task`): the task, its prompt and tool names. */
  claw_eval: ClawEvalDetails.optional(),
});
export type SandboxInfo = z.infer<typeof SandboxInfo>;
