/** The verifier against DNS as deployed: truncation, CNAME targets, dangling MX hosts, null MX mixed in, failures. */
import { describe, expect, it } from 'vitest';
import type { Zone } from '@svc/testkit';
import { useWorld, verdicts } from './world.ts';

const bigMx = Array.from({ length: 40 }, (_, i): [number, string] => [10 + i, `mx${i}.a-long-mail-exchanger-name.big.test`]);
const ZONE: Zone = {
  'big.test': { MX: bigMx },
  ...Object.fromEntries(bigMx.map(([, name]) => [name, { A: ['127.0.0.80'] }])),
  'alias.test': { MX: [[10, 'mx.alias.test']] },
  'mx.alias.test': { CNAME: 'inbound.provider.test' },
  'inbound.provider.test': { A: ['127.0.0.80'] },
  'skip.test': {
    MX: [
      [10, 'gone.skip.test'],
      [20, 'mx.skip.test'],
    ],
  },
  'mx.skip.test': { A: ['127.0.0.80'] },
  'dangling.test': { MX: [[10, 'gone.dangling.test']] },
  'mixed-null.test': {
    MX: [
      [10, 'mx.mixed-null.test'],
      [20, '.'],
    ],
  },
  'mx.mixed-null.test': { A: ['127.0.0.81'] },
  'servfail.test': { behaviour: 'servfail' },
  'silent.test': { behaviour: 'timeout' },
  'hostfail.test': { MX: [[10, 'mx.hostfail.test']] },
  'mx.hostfail.test': { behaviour: 'servfail' },
};

const world = useWorld(ZONE, {
  '127.0.0.80': { users: ['ann@big.test', 'ann@alias.test', 'ann@skip.test'] },
  '127.0.0.81': { catchAll: true },
});

describe('DNS as deployed, end to end', () => {
  it('a truncated MX answer retried over TCP, a CNAME MX target, an unresolvable preferred MX: all reach the server', async () => {
    const results = await world.run(['ann@big.test', 'ann@alias.test', 'ann@skip.test']);
    expect(verdicts(results)).toEqual({
      'ann@big.test': 'deliverable/accepted_email',
      'ann@alias.test': 'deliverable/accepted_email',
      'ann@skip.test': 'deliverable/accepted_email',
    });
    expect(world.dns.queries.filter((query) => query.name === 'big.test').map((query) => query.transport)).toEqual(['udp', 'tcp']);
    expect(results[0]?.checks.mx).toHaveLength(40);
    expect(results[2]?.checks.mx).toEqual(['gone.skip.test', 'mx.skip.test']);
  });

  it('no MX host resolves: no mail host, undeliverable/invalid_domain', async () => {
    const [result] = await world.run(['ann@dangling.test']);
    expect(result).toMatchObject({ verdict: 'undeliverable', reason: 'invalid_domain' });
    expect(result?.checks).toMatchObject({ domainExists: true, mx: ['gone.dangling.test'], smtp: null, catchAll: null });
  });

  it('a null MX anywhere in the set: invalid_domain, and no connection to any host of the domain', async () => {
    const server = world.smtp.get('127.0.0.81')!;
    const [result] = await world.run(['ann@mixed-null.test']);
    expect(result).toMatchObject({
      verdict: 'undeliverable',
      reason: 'invalid_domain',
      checks: { domainExists: true, mx: [], smtp: null },
    });
    expect(server.connections).toBe(0);
    expect(world.dns.queries.some((query) => query.name === 'mx.mixed-null.test')).toBe(false);
  });

  it('SERVFAIL and silence stay risky, and say DNS could not tell', async () => {
    const results = await world.run(['ann@servfail.test', 'ann@silent.test', 'ann@hostfail.test'], { VERIFY_CONNECT_TIMEOUT_MS: '400' });
    expect(verdicts(results)).toEqual({
      'ann@servfail.test': 'risky/unexpected_error',
      'ann@silent.test': 'risky/timeout',
      'ann@hostfail.test': 'risky/unexpected_error',
    });
    for (const result of results.slice(0, 2))
      expect(result.checks).toMatchObject({ domainExists: null, mx: null, smtp: null, catchAll: null });
    // The MX answer came, the host's address did not: the domain exists, its mail host is known.
    expect(results[2]?.checks).toMatchObject({ domainExists: true, mx: ['mx.hostfail.test'], smtp: null, catchAll: null });
  });
});
