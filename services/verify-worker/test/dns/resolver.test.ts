/** The resolver against the rig's DNS server, which answers as deployed resolvers do. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsResolver } from '../../src/dns/resolver.ts';
import { startDnsServer, type RigDnsServer, type Zone } from '@svc/testkit';

const bigMx = Array.from({ length: 40 }, (_, i): [number, string] => [10 + i, `mx${i}.a-long-mail-exchanger-name.big.test`]);
const ZONE: Zone = {
  'plain.test': { MX: [[10, 'mx.plain.test']] },
  'mx.plain.test': { A: ['192.0.2.1'], AAAA: ['2001:db8::1'] },
  'nullmx.test': { MX: 'null' },
  // A null MX mixed into a set: RFC 7505 §3 says no mail, whatever else is there.
  'mixed-null.test': {
    MX: [
      [0, '.'],
      [10, 'mx.mixed.test'],
    ],
  },
  'mixed-null-late.test': {
    MX: [
      [5, 'mx.mixed.test'],
      [20, '.'],
    ],
  },
  'mx.mixed.test': { A: ['192.0.2.2'] },
  // Larger than any UDP buffer a client announces: TC bit, then TCP.
  'big.test': { MX: bigMx },
  ...Object.fromEntries(bigMx.map(([, name]) => [name, { A: ['192.0.2.40'] }])),
  'forced-tc.test': { MX: [[10, 'mx.plain.test']], truncate: true },
  // The MX target is a CNAME (RFC 2181 §10.3 forbids it; deployed resolvers follow it).
  'alias.test': { MX: [[10, 'mx.alias.test']] },
  'mx.alias.test': { CNAME: 'real-mx.provider.test' },
  'real-mx.provider.test': { A: ['192.0.2.7'] },
  // The preferred MX host does not resolve: skip to the next one.
  'skip.test': {
    MX: [
      [10, 'gone.skip.test'],
      [20, 'nodata.skip.test'],
      [30, 'mx.plain.test'],
    ],
  },
  'nodata.skip.test': {},
  // No MX host resolves: no mail host.
  'dangling.test': {
    MX: [
      [10, 'gone1.dangling.test'],
      [20, 'gone2.dangling.test'],
    ],
  },
  // The only host left fails temporarily: a temporary failure, never a missing domain.
  'hostfail.test': {
    MX: [
      [10, 'gone.hostfail.test'],
      [20, 'broken.hostfail.test'],
    ],
  },
  'broken.hostfail.test': { behaviour: 'servfail' },
  'implicit.test': { A: ['192.0.2.9'] },
  'nothing.test': {},
  'servfail.test': { behaviour: 'servfail' },
  'silent.test': { behaviour: 'timeout' },
};

describe('DnsResolver against the rig', () => {
  let dns: RigDnsServer;
  let resolver: DnsResolver;
  beforeAll(async () => {
    dns = await startDnsServer(ZONE);
    resolver = new DnsResolver({ servers: [dns.address], timeoutMs: 300, mxCacheSeconds: 60 });
  });
  afterAll(() => dns.close());

  it('MX hosts by preference with their IPv4 and IPv6 addresses', async () => {
    expect(await resolver.lookupMailHosts('plain.test')).toEqual({
      kind: 'mx',
      names: ['mx.plain.test'],
      hosts: [{ name: 'mx.plain.test', addresses: ['192.0.2.1', '2001:db8::1'] }],
    });
  });

  it.each(['nullmx.test', 'mixed-null.test', 'mixed-null-late.test'])(
    'a null MX anywhere in the set of %s means no mail, and no host is looked up',
    async (domain) => {
      expect(await resolver.lookupMailHosts(domain)).toEqual({ kind: 'null_mx' });
      expect(dns.queries.filter((query) => query.name === 'mx.mixed.test')).toEqual([]);
    },
  );

  it('a truncated UDP answer is asked again over TCP', async () => {
    const found = await resolver.lookupMailHosts('big.test');
    expect(found).toMatchObject({ kind: 'mx', names: bigMx.map(([, name]) => name) });
    expect(dns.queries.filter((query) => query.name === 'big.test').map((query) => query.transport)).toEqual(['udp', 'tcp']);
    await resolver.lookupMailHosts('forced-tc.test');
    expect(dns.queries.filter((query) => query.name === 'forced-tc.test').map((query) => query.transport)).toEqual(['udp', 'tcp']);
  });

  it('an MX target that is a CNAME is followed to its addresses', async () => {
    expect(await resolver.lookupMailHosts('alias.test')).toEqual({
      kind: 'mx',
      names: ['mx.alias.test'],
      hosts: [{ name: 'mx.alias.test', addresses: ['192.0.2.7'] }],
    });
  });

  it('MX hosts that do not resolve are skipped; none left means no mail host', async () => {
    expect(await resolver.lookupMailHosts('skip.test')).toMatchObject({
      kind: 'mx',
      names: ['gone.skip.test', 'nodata.skip.test', 'mx.plain.test'],
      hosts: [{ name: 'mx.plain.test' }],
    });
    expect(await resolver.lookupMailHosts('dangling.test')).toEqual({
      kind: 'no_mail_host',
      names: ['gone1.dangling.test', 'gone2.dangling.test'],
    });
  });

  it('a host that failed temporarily is never taken for a missing one', async () => {
    expect(await resolver.lookupMailHosts('hostfail.test')).toEqual({
      kind: 'temp_error',
      detail: 'ESERVFAIL',
      names: ['gone.hostfail.test', 'broken.hostfail.test'],
    });
  });

  it('no MX: the domain’s own address is its implicit MX; neither: no mail host; unknown name: NXDOMAIN', async () => {
    expect(await resolver.lookupMailHosts('implicit.test')).toEqual({
      kind: 'implicit',
      names: ['implicit.test'],
      hosts: [{ name: 'implicit.test', addresses: ['192.0.2.9'] }],
    });
    expect(await resolver.lookupMailHosts('nothing.test')).toEqual({ kind: 'no_mail_host', names: [] });
    expect(await resolver.lookupMailHosts('nowhere.test')).toEqual({ kind: 'nxdomain' });
  });

  it('SERVFAIL is a temporary error and silence a timeout, neither cached', async () => {
    expect(await resolver.lookupMailHosts('servfail.test')).toMatchObject({ kind: 'temp_error', detail: 'ESERVFAIL' });
    expect(await resolver.lookupMailHosts('silent.test')).toEqual({ kind: 'timeout' });
    const asked = dns.queries.filter((query) => query.name === 'servfail.test').length;
    await resolver.lookupMailHosts('servfail.test');
    expect(dns.queries.filter((query) => query.name === 'servfail.test').length).toBeGreaterThan(asked);
  });

  it('caches answers and shares concurrent lookups', async () => {
    const resolverWithCache = new DnsResolver({ servers: [dns.address], timeoutMs: 300, mxCacheSeconds: 60 });
    const before = dns.queries.filter((query) => query.name === 'implicit.test').length;
    await Promise.all([1, 2, 3].map(() => resolverWithCache.lookupMailHosts('implicit.test')));
    await resolverWithCache.lookupMailHosts('implicit.test');
    // One MX query (NODATA), one A and one AAAA query, whatever the number of lookups.
    expect(dns.queries.filter((query) => query.name === 'implicit.test').length - before).toBe(3);
  });
});
