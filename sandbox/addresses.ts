// Hosts and addresses, classified by what they reach: host parsing (WHATWG-style normalisation of names and IP
// literals, "host:port" authorities) and the class of an address or host — public, loopback, private, link-local,
// cloud metadata, … — from the IANA special-purpose ranges and the well-known dangerous names. Pure: no I/O.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

/** A host after WHATWG-style normalisation: an IP literal (canonical text) or a lower-case domain name. */
export type ParsedHost =
  | { kind: 'ip'; address: string; family: 4 | 6 }
  | { kind: 'domain'; name: string };

// Names that never need DNS to be dangerous: Chromium resolves *.localhost itself, and the cloud
// metadata names resolve to link-local addresses inside VMs.
const LOOPBACK_NAMES = /(^|\.)localhost$/;
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.com',
]);

const METADATA_ADDRESSES = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack
  '169.254.170.2', // AWS ECS task metadata
  '169.254.169.253', // AWS DNS
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure wire server
  'fd00:ec2::254', // AWS IPv6 IMDS
]);

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
const v4 = (s: string): Cidr => ipaddr.IPv4.parseCIDR(s);
const v6 = (s: string): Cidr => ipaddr.IPv6.parseCIDR(s);

// Ordered: the first match wins. Sources: IANA special-purpose address registries (RFC 6890 and successors).
const IPV4_RANGES: Array<[Cidr, AddressClass]> = [
  [v4('0.0.0.0/8'), 'unspecified'],
  [v4('10.0.0.0/8'), 'private'],
  [v4('100.64.0.0/10'), 'private'], // carrier-grade NAT
  [v4('127.0.0.0/8'), 'loopback'],
  [v4('169.254.0.0/16'), 'link_local'],
  [v4('172.16.0.0/12'), 'private'],
  [v4('192.0.0.0/24'), 'reserved'],
  [v4('192.0.2.0/24'), 'reserved'],
  [v4('192.31.196.0/24'), 'reserved'],
  [v4('192.52.193.0/24'), 'reserved'],
  [v4('192.88.99.0/24'), 'reserved'],
  [v4('192.168.0.0/16'), 'private'],
  [v4('192.175.48.0/24'), 'reserved'],
  [v4('198.18.0.0/15'), 'reserved'],
  [v4('198.51.100.0/24'), 'reserved'],
  [v4('203.0.113.0/24'), 'reserved'],
  [v4('224.0.0.0/4'), 'multicast'],
  [v4('255.255.255.255/32'), 'broadcast'],
  [v4('240.0.0.0/4'), 'reserved'],
];

const IPV6_RANGES: Array<[Cidr, AddressClass]> = [
  [v6('::/128'), 'unspecified'],
  [v6('::1/128'), 'loopback'],
  [v6('fe80::/10'), 'link_local'],
  [v6('fec0::/10'), 'private'], // deprecated site-local
  [v6('fc00::/7'), 'private'],
  [v6('ff00::/8'), 'multicast'],
  [v6('64:ff9b:1::/48'), 'private'], // local-use NAT64
  [v6('100::/64'), 'reserved'], // discard
  [v6('2001::/32'), 'reserved'], // Teredo: the embedded client address is obfuscated, refuse outright
  [v6('2001:2::/48'), 'reserved'],
  [v6('2001:10::/28'), 'reserved'],
  [v6('2001:20::/28'), 'reserved'],
  [v6('2001:db8::/32'), 'reserved'],
  [v6('3fff::/20'), 'reserved'], // documentation (RFC 9637)
  [v6('5f00::/16'), 'reserved'], // SRv6 SIDs
];
const IPV6_GLOBAL_UNICAST = v6('2000::/3');

const DOTTED_QUAD = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

function stripBrackets(s: string): string {
  return s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
}

/**
 * Parses any host spelling the way a browser would (WHATWG URL host parser: decimal/hex/octal/short IPv4,
 * percent-encoding, IDNA, IPv6 in brackets) and canonicalises IP literals. Returns null for invalid hosts.
 */
export function parseHost(input: string): ParsedHost | null {
  let host = input.trim();
  if (host === '' || /[\s/\\?#@]/.test(host)) return null;
  // A bare IPv6 literal ("::1") has colons; a bracketed one is left to the URL parser.
  if (!host.startsWith('[') && host.includes(':')) host = `[${host}]`;
  // Zone ids ("fe80::1%eth0") are rejected by the URL parser; they only ever name link-local addresses.
  const zone = /^\[([^\]%]+)%(25)?[^\]]*\]$/.exec(host);
  if (zone) host = `[${zone[1]}]`;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}/`).hostname;
  } catch {
    return null;
  }
  if (hostname === '') return null;
  if (hostname.startsWith('[')) {
    try {
      return { kind: 'ip', address: ipaddr.IPv6.parse(stripBrackets(hostname)).toString(), family: 6 };
    } catch {
      return null;
    }
  }
  // The URL parser already turned every IPv4 spelling into dotted decimal; a name cannot end in a number.
  if (DOTTED_QUAD.test(hostname)) return { kind: 'ip', address: hostname, family: 4 };
  // Trailing dots name the same host (DNS root); strip them so rules match.
  const name = hostname.replace(/\.+$/, '');
  if (name === '' || name.includes('..')) return null;
  return { kind: 'domain', name };
}

/** The IPv4 address embedded in an IPv6 address by mapping, compatibility, NAT64 or 6to4, if any. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts;
  const tail = () => new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped)
  if (zeros(0, 5) && p[5] === 0xffff) return tail();
  // ::ffff:0:a.b.c.d (SIIT "IPv4-translated")
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return tail();
  // ::a.b.c.d (deprecated IPv4-compatible; :: and ::1 are handled before this)
  if (zeros(0, 6) && (p[6] !== 0 || p[7] > 1)) return tail();
  // 64:ff9b::a.b.c.d (well-known NAT64 prefix)
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return tail();
  // 2002:aabb:ccdd::/48 (6to4)
  if (p[0] === 0x2002) return new ipaddr.IPv4([p[1] >> 8, p[1] & 0xff, p[2] >> 8, p[2] & 0xff]);
  return null;
}

function classifyV4(a: ipaddr.IPv4): AddressClass {
  if (METADATA_ADDRESSES.has(a.toString())) return 'metadata';
  for (const [cidr, cls] of IPV4_RANGES) if (a.match(cidr as [ipaddr.IPv4, number])) return cls;
  return 'public';
}

function classifyV6(a: ipaddr.IPv6): AddressClass {
  const text = a.toString();
  if (METADATA_ADDRESSES.has(text)) return 'metadata';
  if (text === '::') return 'unspecified';
  if (text === '::1') return 'loopback';
  const inner = embeddedIPv4(a);
  if (inner) return classifyV4(inner);
  for (const [cidr, cls] of IPV6_RANGES) if (a.match(cidr as [ipaddr.IPv6, number])) return cls;
  // Only 2000::/3 is allocated for global unicast; everything else is unallocated or special.
  return a.match(IPV6_GLOBAL_UNICAST as [ipaddr.IPv6, number]) ? 'public' : 'reserved';
}

/** Classifies an address given in any spelling parseHost accepts; null when it is not an IP literal. */
export function classifyAddress(address: string): AddressClass | null {
  // Fast path for the canonical text a resolver returns (this runs for every proxied request).
  const family = isIP(address);
  if (family === 4) return classifyV4(ipaddr.IPv4.parse(address));
  if (family === 6 && !address.includes('%')) return classifyV6(ipaddr.IPv6.parse(address));
  const parsed = parseHost(address);
  if (!parsed || parsed.kind !== 'ip') return null;
  return parsed.family === 4 ? classifyV4(ipaddr.IPv4.parse(parsed.address)) : classifyV6(ipaddr.IPv6.parse(parsed.address));
}

/** Class of a host by its spelling alone (names: only the well-known dangerous ones; others are 'public'). */
export function classifyHost(host: ParsedHost): AddressClass {
  if (host.kind === 'ip') return classifyAddress(host.address) ?? 'reserved';
  if (LOOPBACK_NAMES.test(host.name)) return 'loopback';
  if (METADATA_NAMES.has(host.name)) return 'metadata';
  return 'public';
}

/** Splits "host:port" / "[v6]:port" (a CONNECT target or Host header). Port defaults to `defaultPort`. */
export function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } | null {
  const m = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{1,5}))?$/.exec(authority.trim());
  if (!m || m[1] === '') return null;
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  if (port < 1 || port > 65535) return null;
  return { host: m[1], port };
}
