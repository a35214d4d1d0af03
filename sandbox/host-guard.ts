// Who may reach a server that runs without authentication. Pure functions, used at startup (sandbox/config.ts:
// a non-loopback bind with auth off is refused unless overridden) and per request (server/app.ts: the Host
// header check that stops DNS rebinding — a web page whose name resolves to 127.0.0.1 must not drive Grove).
// With an API key the key is the guard, and Host is not checked: workers reached by pod IP keep working.

/** Whether a bind address only accepts connections from this machine. */
export function isLoopbackBind(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The host name of a Host header value ("127.0.0.1:8321" → "127.0.0.1", "[::1]:80" → "::1"), lower case. */
function hostOfHeader(value: string): string {
  const v = value.trim().toLowerCase();
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    return end > 0 ? v.slice(1, end) : v;
  }
  const colon = v.lastIndexOf(':');
  // A bare IPv6 address without brackets is not a valid Host value; keep it whole so it is not loopback.
  return colon >= 0 && v.indexOf(':') === colon ? v.slice(0, colon) : v;
}

/**
 * Whether a request with this Host header may be served while authentication is off: loopback names and
 * addresses, and the bind address itself when it is a specific one (an explicitly overridden remote bind).
 */
export function hostAllowedWithoutAuth(hostHeader: string | undefined, bindHost: string): boolean {
  if (!hostHeader) return false;
  const name = hostOfHeader(hostHeader);
  if (isLoopbackBind(name)) return true;
  const bind = bindHost.trim().toLowerCase().replace(/^\[|\]$/g, '');
  if (bind === '0.0.0.0' || bind === '::' || bind === '') return false;
  return name === bind;
}

/**
 * Whether a request with this Origin header may be served while authentication is off. Browsers send Origin on
 * WebSocket handshakes and on every non-GET request; a page on another site (or a rebound name) must not drive a
 * local Grove, so only loopback origins (and the specific bind address) pass. No Origin at all is a non-browser
 * client (curl, the SDKs, a `ws` client) and passes; `null` (sandboxed frames, file: pages) does not.
 */
export function originAllowedWithoutAuth(originHeader: string | undefined, bindHost: string): boolean {
  if (originHeader === undefined) return true;
  let u: URL;
  try {
    u = new URL(originHeader.trim());
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  if (u.username || u.password || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) return false;
  return hostAllowedWithoutAuth(u.host, bindHost);
}
