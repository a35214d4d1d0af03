import { describe, expect, it } from 'vitest';
import { NetworkRules } from '../../protocol/sandbox.ts';
import {
  classifyAddress,
  evaluate,
  parseHost,
  precheck,
  splitHostPort,
  type AddressClass,
} from '../../sandbox/netpolicy.ts';

const rules = (r: Partial<NetworkRules> = {}): NetworkRules => NetworkRules.parse(r);

// An injected resolver: the tests have no DNS; names map to fixed addresses.
const zone: Record<string, string[]> = {
  'example.com': ['93.184.215.14'],
  'www.example.com': ['93.184.215.14'],
  'evil.test': ['127.0.0.1'],
  'rebind.test': ['93.184.215.14', '10.0.0.5'],
  'v6evil.test': ['::ffff:169.254.169.254'],
  'intranet.corp': ['192.168.1.10'],
  'cgnat.test': ['100.64.3.4'],
  'public6.test': ['2606:4700::1111'],
};
const resolve = (host: string): string[] => {
  const p = parseHost(host);
  if (!p) return [];
  return p.kind === 'ip' ? [p.address] : (zone[p.name] ?? []);
};
const check = (r: NetworkRules, host: string, port = 80) => evaluate(r, { host, port, addresses: resolve(host) });

describe('parseHost', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0x7f.0.0.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['%31%32%37.0.0.1', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['0300.0250.0.1', '192.168.0.1'],
    ['[::1]', '::1'],
    ['::1', '::1'],
    ['[0:0:0:0:0:0:0:1]', '::1'],
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ['[::FFFF:7F00:1]', '::ffff:7f00:1'],
    ['[fe80::1%25eth0]', 'fe80::1'],
    ['fe80::1%eth0', 'fe80::1'],
  ])('%s is the address %s', (input, address) => {
    expect(parseHost(input)).toMatchObject({ kind: 'ip', address });
  });

  it.each([
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    ['exa%6Dple.com', 'example.com'],
    ['bücher.ch', 'xn--bcher-kva.ch'],
    ['LOCALHOST', 'localhost'],
  ])('%s is the name %s', (input, name) => {
    expect(parseHost(input)).toEqual({ kind: 'domain', name });
  });

  it.each(['', '1.2.3.4.5', '999.1.1.1', 'a b', 'evil.com@127.0.0.1', 'x/y', '127.0.0.1:80', '[::1', 'a..b'])(
    '%j is invalid',
    (input) => {
      expect(parseHost(input)).toBeNull();
    },
  );
});

describe('classifyAddress', () => {
  const table: Array<[string, AddressClass]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['2130706433', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'], // IPv4-compatible
    ['::ffff:0:7f00:1', 'loopback'], // IPv4-translated
    ['64:ff9b::7f00:1', 'loopback'], // NAT64
    ['64:ff9b::10.0.0.1', 'private'],
    ['2002:7f00:1::', 'loopback'], // 6to4
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['0xa9fea9fe', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001:0:4136:e378::1', 'reserved'], // Teredo
    ['4000::1', 'reserved'], // outside 2000::/3
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['93.184.215.14', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
  ];
  it.each(table)('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });

  it('returns null for names', () => {
    expect(classifyAddress('example.com')).toBeNull();
  });
});

describe('evaluate with default rules', () => {
  it.each([
    '127.0.0.1',
    'localhost',
    'LOCALHOST.',
    'app.localhost',
    '2130706433',
    '0x7f000001',
    '0x7f.0.0.1',
    '0177.0.0.1',
    '127.1',
    '[::1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[64:ff9b::7f00:1]',
    '0.0.0.0',
    '0',
  ])('denies loopback-ish host %s', (host) => {
    const v = check(rules(), host);
    expect(v.allowed).toBe(false);
    expect(['loopback', 'unspecified']).toContain(v.reason);
  });

  it.each([
    ['169.254.169.254', 'metadata'],
    ['metadata.google.internal', 'metadata'],
    ['metadata.google.internal.', 'metadata'],
    ['[fd00:ec2::254]', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['10.0.0.1', 'private'],
    ['intranet.corp', 'private'],
    ['cgnat.test', 'private'],
    ['evil.test', 'loopback'],
    ['rebind.test', 'private'],
    ['v6evil.test', 'metadata'],
    ['unknown.test', 'unresolved'],
    ['224.0.0.1', 'multicast'],
    ['evil.com@127.0.0.1', 'invalid_host'],
  ])('denies %s (%s)', (host, reason) => {
    expect(check(rules(), host)).toMatchObject({ allowed: false, reason });
  });

  it.each(['example.com', 'www.example.com', '8.8.8.8', 'public6.test', '[2606:4700::1111]'])('allows public %s', (host) => {
    expect(check(rules(), host)).toEqual({ allowed: true, reason: 'public' });
  });

  it('denies an invalid port', () => {
    expect(evaluate(rules(), { host: 'example.com', port: 0, addresses: ['93.184.215.14'] }).allowed).toBe(false);
  });
});

describe('evaluate with rules', () => {
  it('an allow entry opens exactly that host:port, in any spelling of the address', () => {
    const r = rules({ allow: ['127.0.0.1:8123'] });
    expect(check(r, '127.0.0.1', 8123)).toMatchObject({ allowed: true, reason: 'allow_rule', explicit: true });
    expect(check(r, '2130706433', 8123).allowed).toBe(true);
    expect(check(r, '127.0.0.1', 8124)).toMatchObject({ allowed: false, reason: 'loopback' });
    expect(check(r, 'localhost', 8123).allowed).toBe(false);
    expect(check(r, '[::1]', 8123).allowed).toBe(false);
  });

  it('supports host:*, bare hosts, wildcards and IPv6 entries', () => {
    const r = rules({ allow: ['localhost:*', 'intranet.corp', '*.evil.test', '[::1]:9000'] });
    expect(check(r, 'localhost', 1).allowed).toBe(true);
    expect(check(r, 'LocalHost.', 65535).allowed).toBe(true);
    expect(check(r, 'intranet.corp', 443).allowed).toBe(true);
    expect(check(r, 'a.evil.test', 80).allowed).toBe(true);
    expect(check(r, 'evil.test', 80).allowed).toBe(false); // "*." is subdomains only
    expect(check(r, '[::1]', 9000).allowed).toBe(true);
    expect(check(r, '[::1]', 9001).allowed).toBe(false);
  });

  it('ignores malformed allow entries', () => {
    const r = rules({ allow: ['127.0.0.1:99999', 'a b', ':80'] });
    expect(check(r, '127.0.0.1', 80).allowed).toBe(false);
  });

  it('block_network denies everything except explicit allows', () => {
    const r = rules({ block_network: true, allow: ['127.0.0.1:8123'] });
    expect(check(r, 'example.com')).toMatchObject({ allowed: false, reason: 'block_network' });
    expect(check(r, '8.8.8.8')).toMatchObject({ allowed: false, reason: 'block_network' });
    expect(check(r, '127.0.0.1', 8123).allowed).toBe(true);
  });

  it('deny_domains denies the domain and its subdomains', () => {
    const r = rules({ deny_domains: ['example.com'] });
    expect(check(r, 'example.com')).toMatchObject({ allowed: false, reason: 'deny_domains' });
    expect(check(r, 'WWW.Example.com.')).toMatchObject({ allowed: false, reason: 'deny_domains' });
    expect(check(r, 'public6.test').allowed).toBe(true);
    expect(check(r, 'notexample.com').allowed).toBe(false); // unresolved, but not by the deny rule
    expect(check(r, 'notexample.com').reason).toBe('unresolved');
  });

  it('allow_domains restricts to those domains and their subdomains', () => {
    const r = rules({ allow_domains: ['example.com'] });
    expect(check(r, 'example.com').allowed).toBe(true);
    expect(check(r, 'www.example.com').allowed).toBe(true);
    expect(check(r, 'public6.test')).toMatchObject({ allowed: false, reason: 'not_in_allow_domains' });
    expect(check(r, '8.8.8.8')).toMatchObject({ allowed: false, reason: 'not_in_allow_domains' });
  });

  it('allow_domains does not open a domain that resolves to a private address', () => {
    const r = rules({ allow_domains: ['evil.test', 'rebind.test'] });
    expect(check(r, 'evil.test')).toMatchObject({ allowed: false, reason: 'loopback', address: '127.0.0.1' });
    expect(check(r, 'rebind.test')).toMatchObject({ allowed: false, reason: 'private', address: '10.0.0.5' });
  });

  it('deny_domains wins over allow_domains; allow wins over both', () => {
    const r = rules({ allow_domains: ['example.com'], deny_domains: ['www.example.com'], allow: ['www.example.com:443'] });
    expect(check(r, 'www.example.com', 80)).toMatchObject({ allowed: false, reason: 'deny_domains' });
    expect(check(r, 'www.example.com', 443)).toMatchObject({ allowed: true, reason: 'allow_rule' });
  });

  it('precheck decides names without DNS', () => {
    expect(precheck(rules(), 'example.com', 443)).toEqual({ allowed: true, reason: 'public' });
    expect(precheck(rules(), 'localhost', 443)).toMatchObject({ allowed: false, reason: 'loopback' });
    expect(precheck(rules({ allow: ['localhost:443'] }), 'localhost', 443)).toMatchObject({ explicit: true });
  });
});

describe('splitHostPort', () => {
  it.each([
    ['example.com:443', 80, { host: 'example.com', port: 443 }],
    ['example.com', 443, { host: 'example.com', port: 443 }],
    ['[::1]:8080', 80, { host: '[::1]', port: 8080 }],
    ['[::ffff:127.0.0.1]', 443, { host: '[::ffff:127.0.0.1]', port: 443 }],
    ['127.1:80', 443, { host: '127.1', port: 80 }],
  ])('%s', (input, def, expected) => {
    expect(splitHostPort(input, def)).toEqual(expected);
  });
  it.each(['::1:80', ':80', 'a:b', 'x:70000'])('rejects %s', (input) => {
    expect(splitHostPort(input, 80)).toBeNull();
  });
});
