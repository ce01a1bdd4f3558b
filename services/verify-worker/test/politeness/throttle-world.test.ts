/**
 * A provider that throttles like Gmail (five MX hosts sharing one per-client limit, `421-4.7.28`
 * and a close beyond it, the block re-armed by each attempt): a batch that meets the throttle
 * answers in time with `throttled` and no session goes to any of the provider's hosts during the
 * back-off, in this worker or in another one sharing its Redis; a reply about one mailbox's rate
 * throttles nothing.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@svc/config';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { createRigThrottle, findRedis, type FoundRedis, type Zone } from '@svc/testkit';
import { createVerifier } from '../../src/handler.ts';
import { FAST_TUNING, useWorld, verdicts } from '../engine/world.ts';

const GOOGLE = [
  'gmail-smtp-in.l.google.com',
  'alt1.gmail-smtp-in.l.google.com',
  'alt2.gmail-smtp-in.l.google.com',
  'alt3.gmail-smtp-in.l.google.com',
  'alt4.gmail-smtp-in.l.google.com',
];
const IPS = ['127.0.0.200', '127.0.0.201', '127.0.0.202', '127.0.0.203', '127.0.0.204'];
const at = (domain: string, count: number, from = 0) => Array.from({ length: count }, (_, i) => `k${from + i}@${domain}`);
const known = (domain: string) => [...at(domain, 60), `postmaster@${domain}`];

const throttle = createRigThrottle({ perWindow: 40, windowMs: 60_000 });
const zone: Zone = {
  'gm.test': { MX: GOOGLE.map((name, i): [number, string] => [5 + 10 * i, name]) },
  'gm2.test': { MX: GOOGLE.map((name, i): [number, string] => [5 + 10 * i, name]) },
  ...Object.fromEntries(GOOGLE.map((name, i) => [name, { A: [IPS[i]!] }])),
  'rate.test': { MX: [[10, 'mx.rate.test']] },
  'mx.rate.test': { A: ['127.0.0.206'] },
};
const RATE_REPLY = {
  code: 450,
  text: '4.2.1 The user you are trying to contact is receiving mail at a rate that\n4.2.1 prevents additional messages from being delivered. Please resend your\n4.2.1 message at a later point.',
};
const world = useWorld(zone, {
  ...Object.fromEntries(IPS.map((ip) => [ip, { users: [...known('gm.test'), ...known('gm2.test')], throttle }])),
  '127.0.0.206': { users: known('rate.test'), mailboxes: { 'busy@rate.test': RATE_REPLY } },
});
const googleServers = () => IPS.map((ip) => world.smtp.get(ip)!);
const connections = () => googleServers().reduce((sum, server) => sum + server.connections, 0);
const call = (deadlineMs: number) => ({ deadlineAt: Date.now() + deadlineMs, signal: new AbortController().signal });

describe('a provider that throttles', () => {
  it('a batch meeting the throttle answers in time with `throttled`; no session during the back-off, on any MX host, from any worker', async () => {
    const redis: FoundRedis = await findRedis();
    const clients: Redis[] = [createRedis(redis.url, 'request'), createRedis(redis.url, 'request')];
    try {
      await Promise.all(clients.map((client) => waitForRedis(client, 5_000)));
      const prefix = `throttle-world-${Date.now()}`;
      // Two workers of one deployment: each its own verifier and Redis connection, one prefix.
      const [first, second] = clients.map((client) =>
        createVerifier({
          config: loadConfig(
            world.env({
              REDIS_PREFIX: prefix,
              // Budgets above the provider's real limit (as an operator may set them): the throttle decides.
              VERIFY_PROVIDER_BUDGETS: '{"google":{"sessionsPerMinute":60,"recipientsPerSession":100,"recipientsPerMinute":1000}}',
            }),
          ),
          redis: client,
          tuning: FAST_TUNING,
        }),
      );
      const batch = at('gm.test', 100);
      const started = Date.now();
      const results = await first!.verify(batch, call(5_000));
      expect(Date.now() - started).toBeLessThan(5_000);
      const byReason = Object.values(verdicts(results)).reduce<Record<string, number>>(
        (counts, v) => ({ ...counts, [v]: (counts[v] ?? 0) + 1 }),
        {},
      );
      // 40 RCPTs answered: two controls and 38 addresses; the rest waits for the back-off.
      expect(byReason['deliverable/accepted_email']).toBe(38);
      expect(byReason['risky/throttled']).toBe(62);
      expect(results.find((r) => r.reason === 'throttled')!.checks.smtp).toBeNull();
      expect(connections()).toBe(1);
      expect(throttle.replies).toBe(1);

      // The same worker, and another worker of the deployment: nothing goes out while the back-off lasts.
      for (const verifier of [first!, second!]) {
        const again = await verifier.verify(at('gm2.test', 10), call(5_000));
        expect(new Set(Object.values(verdicts(again)))).toEqual(new Set(['risky/throttled']));
      }
      expect(connections()).toBe(1);
      expect(throttle.connectionsWhileBlocked).toBe(0);
      expect(throttle.replies).toBe(1);
    } finally {
      clients.forEach((client) => client.disconnect());
      await redis.stop();
    }
  });

  it('a reply about one mailbox\'s rate ("receiving mail at a rate") answers that address and throttles nothing', async () => {
    const verifier = world.verifier();
    const first = await verifier.verify(['busy@rate.test', 'k1@rate.test'], call(5_000));
    expect(verdicts(first)).toEqual({ 'busy@rate.test': 'risky/greylisted', 'k1@rate.test': 'deliverable/accepted_email' });
    const second = await verifier.verify(['k2@rate.test', 'k99@rate.test'], call(5_000));
    expect(verdicts(second)).toEqual({ 'k2@rate.test': 'deliverable/accepted_email', 'k99@rate.test': 'undeliverable/rejected_email' });
    expect(world.smtp.get('127.0.0.206')!.connections).toBe(2);
  });
});
