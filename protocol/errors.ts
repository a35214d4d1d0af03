// One error catalog: stable codes, HTTP status, a message a person can act on.
// Library code throws GroveError; the server's single error handler maps it to a response.
export const ERROR_CATALOG = {
  // request / validation
  invalid_request: { status: 400, message: 'The request body or parameters are invalid.' },
  invalid_action: { status: 400, message: 'The action is not a valid canonical action.' },
  unknown_format: { status: 400, message: 'Unknown policy output format.' },
  unauthorized: { status: 401, message: 'Missing API key: send it in the X-API-Key header.' },
  forbidden: { status: 403, message: 'Wrong API key.' },
  forbidden_host: { status: 403, message: 'This Host is not served while authentication is off (DNS-rebinding guard).' },
  forbidden_origin: { status: 403, message: 'This Origin is not served while authentication is off: only loopback pages may use a local Grove.' },
  not_found: { status: 404, message: 'No such resource.' },
  sandbox_not_found: { status: 404, message: 'No sandbox with this id (it may have expired or been deleted).' },
  download_not_found: { status: 404, message: 'No download with this id in the sandbox.' },
  wrong_sandbox_type: { status: 409, message: 'This operation is not available for this sandbox type.' },
  sandbox_not_ready: { status: 409, message: 'The sandbox is not ready yet; wait for it with GET /sandboxes/{id}/wait.' },
  sandbox_busy: { status: 409, message: 'Another step is running in this sandbox; steps in one sandbox are sequential.' },
  sandbox_closed: { status: 410, message: 'The sandbox was closed.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_sandbox_type: { status: 400, message: 'Unsupported sandbox type.' },
  // A start_url (create or reset) whose scheme a sandbox may not open; the same code as the action error.
  navigation_blocked: { status: 400, message: 'Only http, https, data:, blob: and about:blank URLs can be opened in a sandbox.' },
  not_supported_on_backend: { status: 400, message: 'This option or route is not available on the backend this server runs (see docs/kubernetes.md).' },
  // shell sandboxes
  path_not_allowed: { status: 400, message: 'The path is outside the sandbox workspace or not a regular file/directory.' },
  file_not_found: { status: 404, message: 'No such file or directory in the sandbox.' },
  file_too_large: { status: 413, message: 'The file is larger than the server allows.' },
  job_not_found: { status: 404, message: 'No job with this id.' },
  wait_timeout: { status: 408, message: 'The server-side wait ran out before the sandbox was ready.' },
  sandbox_exists: { status: 409, message: 'A sandbox with this id exists already.' },
  exec_failed: { status: 500, message: 'The command could not be started in the sandbox.' },
  task_not_found: { status: 404, message: 'No task with this suite and id on this server (offline sites, or files given with --task-files).' },
  no_task: { status: 409, message: 'This sandbox runs no task: create it with `task` to evaluate it.' },
  capacity_exhausted: { status: 503, message: 'The maximum number of live sandboxes is reached; retry later.' },
  // Admission control (sandbox/admission.ts): starts in progress and queued, step latency, capture time, loop lag.
  overloaded: { status: 503, message: 'The server is at the capacity it measured (starts queued, slow steps or captures, a late event loop); retry after Retry-After seconds.' },
  // A step or observation whose screenshot could not be captured within its deadline: never an answer without it.
  // A step's actions did run (error.details.actions): observe again (GET /sandboxes/{id}/observation), never resend.
  capture_timeout: { status: 503, message: 'The screenshot could not be captured within the deadline (an overloaded machine); observe again after Retry-After seconds.' },
  shutting_down: { status: 503, message: 'The server is shutting down.' },
  // environment (reported inside observations as last_action_error, or as 5xx when the sandbox is lost)
  pod_unschedulable: { status: 503, message: 'No Kubernetes node can run the sandbox pod (requests too large, or no capacity).' },
  image_pull_failed: { status: 502, message: 'The worker image of the sandbox pod cannot be pulled.' },
  pod_start_timeout: { status: 504, message: 'The sandbox pod did not become ready in time.' },
  worker_lost: { status: 502, message: 'The worker running this sandbox stopped or cannot be reached.' },
  start_url_failed: { status: 502, message: 'The start URL could not be opened.' },
  browser_crashed: { status: 500, message: 'The browser process crashed.' },
  browser_start_timeout: { status: 503, message: 'The browser could not open the sandbox in time (an overloaded machine, or a browser restarting); retry later.' },
  service_start_failed: { status: 503, message: "A service of the sandbox's task did not start within its deadline (an overloaded machine, or a broken service); create the sandbox again later." },
  model_unavailable: { status: 502, message: 'A model endpoint the server calls for the sandbox (a simulated user, a judge) did not answer.' },
  internal_error: { status: 500, message: 'Internal Server Error' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export class GroveError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;
  /** Seconds, for 503 capacity answers. */
  readonly retryAfter?: number;
  /** Sent to the client as `error.details` (what a step did before its capture failed); `details` stays in logs. */
  readonly clientDetails?: unknown;
  constructor(code: ErrorCode, message?: string, opts: { details?: unknown; retryAfter?: number; cause?: unknown; clientDetails?: unknown } = {}) {
    super(message ?? ERROR_CATALOG[code].message, { cause: opts.cause });
    this.name = 'GroveError';
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.details = opts.details;
    this.retryAfter = opts.retryAfter;
    this.clientDetails = opts.clientDetails;
  }
}

/**
 * Codes reported as `last_action_error.code` in observations. An action error never fails the HTTP
 * request: the step answers 200 with the error inside the observation.
 */
const ACTION_ERROR_CODES = [
  'invalid_coordinates', // outside the viewport / image
  'label_not_found', // SoM label not in the last observation
  'labels_stale', // SoM labels made on a page the agent has since left (navigation, tab switch)
  'element_not_editable',
  'no_such_tab',
  'navigation_failed', // goto/back/forward failed (classified in message)
  'dns_error',
  'connection_refused',
  'connection_reset',
  'tls_error',
  'http_error',
  'timeout', // action exceeded its timeout (e.g. hung page)
  'page_unresponsive', // JS busy loop: the page did not answer within the action timeout
  'page_crashed', // renderer crashed; the page was reset
  'network_blocked', // the network policy denied the URL
  'limit_reached', // a per-sandbox limit (tabs) refused the action
  'navigation_blocked', // a URL scheme a sandbox may not open (file:, chrome:, devtools:, view-source:…)
  'action_failed', // any other Playwright failure
  'capture_timeout', // the screenshot could not be captured in time: the API answers 503 capture_timeout, never this
] as const;
export type ActionErrorCode = (typeof ACTION_ERROR_CODES)[number];
