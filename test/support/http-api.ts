// A test's HTTP calls to a server it started (Grove's API, a worker, an MCP endpoint): the status, the body as text
// and, when it parses, as JSON. One place for the tests that once each copied this.

export interface Answer {
  status: number;
  /** The body parsed as JSON; undefined when it is not JSON (or empty). */
  json: any;
  text: string;
  headers: Headers;
}

export type Api = (method: string, url: string, body?: unknown) => Promise<Answer>;

/** One request; its answer read whole. */
export async function request(url: string, init: { method: string; headers?: Record<string, string>; body?: string | Uint8Array }): Promise<Answer> {
  const res = await fetch(url, init as RequestInit);
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** Calls to `base` + url with these headers; a body is sent as JSON. */
export function apiOn(base: string, headers: Record<string, string> = {}): Api {
  return (method, url, body) =>
    request(base + url, { method, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
}
