// Network policy for sandboxes: rule evaluation over hosts and addresses (addresses.ts parses and classifies them).
// Pure: no I/O. The caller resolves DNS (see browser-env/network-gate.ts) and passes the addresses in,
// so the addresses checked here are exactly the ones the caller then connects to (no rebinding window).
import ipaddr from 'ipaddr.js';
import type { NetworkRules } from '../protocol/sandbox.ts';
import { classifyAddress, classifyHost, parseHost, type ParsedHost } from './addresses.ts';

export { classifyAddress, parseHost, splitHostPort, type AddressClass, type ParsedHost } from './addresses.ts';

export interface Verdict {
  allowed: boolean;
  /** Stable reason code: allow_rule, public, block_network, deny_domains, not_in_allow_domains,
   * invalid_host, unresolved, or an AddressClass of a denied host/address. */
  reason: string;
  /** True when an explicit `allow` entry opened the host:port (addresses are then not checked). */
  explicit?: boolean;
  /** The offending address when an address check failed. */
  address?: string;
}

export interface Target {
  host: string;
  port: number;
  /** Resolved addresses of `host` (for an IP literal: the literal itself, or empty). */
  addresses: string[];
}

interface AllowEntry {
  host: ParsedHost | '*';
  /** Subdomains of host (leading "*."); the host itself is not included. */
  subdomains: boolean;
  port: number | '*';
}

function parseAllowEntry(entry: string): AllowEntry | null {
  const s = entry.trim().toLowerCase();
  let hostPart = s;
  let port: number | '*' = '*';
  const bracketed = /^(\[[^\]]+\])(?::(\d+|\*))?$/.exec(s);
  if (bracketed) {
    hostPart = bracketed[1];
    if (bracketed[2] && bracketed[2] !== '*') port = Number(bracketed[2]);
  } else if (!ipaddr.IPv6.isValid(s)) {
    const m = /^([^:]+)(?::(\d+|\*))?$/.exec(s);
    if (!m) return null;
    hostPart = m[1];
    if (m[2] && m[2] !== '*') port = Number(m[2]);
  }
  if (port !== '*' && (!Number.isInteger(port) || port < 1 || port > 65535)) return null;
  if (hostPart === '*') return { host: '*', subdomains: false, port };
  const subdomains = hostPart.startsWith('*.');
  const host = parseHost(subdomains ? hostPart.slice(2) : hostPart);
  return host ? { host, subdomains, port } : null;
}

function hostKey(h: ParsedHost): string {
  return h.kind === 'ip' ? h.address : h.name;
}

function isSubdomain(name: string, domain: string): boolean {
  return name.length > domain.length && name.endsWith(`.${domain}`);
}

function allowEntryMatches(e: AllowEntry, host: ParsedHost, port: number): boolean {
  if (e.port !== '*' && e.port !== port) return false;
  if (e.host === '*') return true;
  if (e.subdomains) return host.kind === 'domain' && e.host.kind === 'domain' && isSubdomain(host.name, e.host.name);
  return hostKey(e.host) === hostKey(host);
}

interface DomainEntry {
  host: ParsedHost;
  /** "*.example.com": subdomains only. */
  subOnly: boolean;
}

/** Domain list entry: "example.com" matches it and its subdomains; "*.example.com" only subdomains;
 * an IP literal matches that address in any spelling. */
function parseDomainEntry(entry: string): DomainEntry | null {
  const s = entry.trim().toLowerCase();
  const subOnly = s.startsWith('*.');
  const host = parseHost(subOnly ? s.slice(2) : s.replace(/^\./, ''));
  return host ? { host, subOnly } : null;
}

function domainEntryMatches(e: DomainEntry, host: ParsedHost): boolean {
  if (e.host.kind === 'ip' || host.kind === 'ip') return !e.subOnly && hostKey(e.host) === hostKey(host);
  if (isSubdomain(host.name, e.host.name)) return true;
  return !e.subOnly && host.name === e.host.name;
}

interface CompiledRules {
  source: NetworkRules;
  allowRef: string[];
  allowDomainsRef: string[];
  denyDomainsRef: string[];
  allow: AllowEntry[];
  allowDomains: DomainEntry[];
  denyDomains: DomainEntry[];
}

// Rules are parsed once per rules object (this runs for every proxied request); the array identities are
// compared so that a rules object whose lists were replaced is recompiled. Malformed entries are ignored.
const compiledRules = new WeakMap<NetworkRules, CompiledRules>();

function compile(rules: NetworkRules): CompiledRules {
  const hit = compiledRules.get(rules);
  if (hit && hit.allowRef === rules.allow && hit.allowDomainsRef === rules.allow_domains && hit.denyDomainsRef === rules.deny_domains) {
    return hit;
  }
  const notNull = <T>(x: T | null): x is T => x !== null;
  const c: CompiledRules = {
    source: rules,
    allowRef: rules.allow,
    allowDomainsRef: rules.allow_domains,
    denyDomainsRef: rules.deny_domains,
    allow: rules.allow.map(parseAllowEntry).filter(notNull),
    allowDomains: rules.allow_domains.map(parseDomainEntry).filter(notNull),
    denyDomains: rules.deny_domains.map(parseDomainEntry).filter(notNull),
  };
  compiledRules.set(rules, c);
  return c;
}

/**
 * Everything that can be decided from the host name and port alone, before DNS. A caller that gets
 * `allowed: true` without `explicit` must still resolve and call `evaluate` with the addresses.
 */
export function precheck(rules: NetworkRules, host: string, port: number): Verdict {
  const parsed = parseHost(host);
  if (!parsed || !Number.isInteger(port) || port < 1 || port > 65535) return { allowed: false, reason: 'invalid_host' };
  return precheckParsed(rules, parsed, port);
}

/** precheck() for a host already parsed by parseHost (saves a second parse on the proxy's hot path). */
export function precheckParsed(rules: NetworkRules, parsed: ParsedHost, port: number): Verdict {
  const c = compile(rules);
  if (c.allow.some((e) => allowEntryMatches(e, parsed, port))) return { allowed: true, reason: 'allow_rule', explicit: true };
  if (rules.block_network) return { allowed: false, reason: 'block_network' };
  if (c.denyDomains.some((d) => domainEntryMatches(d, parsed))) return { allowed: false, reason: 'deny_domains' };
  // A non-empty allow_domains whose entries are all malformed still restricts (to nothing).
  if (rules.allow_domains.length > 0 && !c.allowDomains.some((d) => domainEntryMatches(d, parsed))) {
    return { allowed: false, reason: 'not_in_allow_domains' };
  }
  const cls = classifyHost(parsed);
  if (cls !== 'public') return { allowed: false, reason: cls, address: parsed.kind === 'ip' ? parsed.address : undefined };
  return { allowed: true, reason: 'public' };
}

/**
 * Full decision. Precedence: explicit `allow` entry > block_network > deny_domains > allow_domains >
 * the host's own class > every resolved address must be public.
 */
export function evaluate(rules: NetworkRules, target: Target): Verdict {
  const parsed = parseHost(target.host);
  if (!parsed || !Number.isInteger(target.port) || target.port < 1 || target.port > 65535) {
    return { allowed: false, reason: 'invalid_host' };
  }
  const pre = precheckParsed(rules, parsed, target.port);
  if (!pre.allowed || pre.explicit) return pre;
  // An IP literal needs no resolution; a name must have resolved to something we can check.
  const addresses = parsed.kind === 'ip' && target.addresses.length === 0 ? [parsed.address] : target.addresses;
  return checkAddresses(addresses);
}

/** Every address must be public (an empty list is 'unresolved'). */
export function checkAddresses(addresses: string[]): Verdict {
  if (addresses.length === 0) return { allowed: false, reason: 'unresolved' };
  for (const a of addresses) {
    const cls = classifyAddress(a);
    if (cls === null) return { allowed: false, reason: 'invalid_host', address: a };
    if (cls !== 'public') return { allowed: false, reason: cls, address: a };
  }
  return { allowed: true, reason: 'public' };
}
