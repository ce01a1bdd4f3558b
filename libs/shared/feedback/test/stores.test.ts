/**
 * The memory store and the Redis store (a real Redis) answer alike: standings move their
 * domain's tally once per address, catch-all domains join the scope's rate once, history is
 * newest first and cut at the retention, scopes are apart, and Redis holds no address.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { DEFAULT_SETTINGS, Feedback, MemoryFeedbackStore, type FeedbackStore } from '../src/index.ts';
import { RedisFeedbackStore, sharedHashSecret } from '../src/redis-store.ts';

const url = testRedisUrl();
const prefix = uniquePrefix('feedback-store');
const redis = new Redis(url);
afterAll(async () => {
  redis.disconnect();
  await dropPrefix(url, prefix);
});

const H = 3_600_000;
const stores: Array<[string, (retentionMs: number) => FeedbackStore]> = [
  ['memory', (retentionMs) => new MemoryFeedbackStore(retentionMs)],
  ['redis', (retentionMs) => new RedisFeedbackStore(redis, `${prefix}:${retentionMs}`, retentionMs)],
];

describe.each(stores)('%s feedback store', (_name, makeStore) => {
  const feedbackOf = (store: FeedbackStore, clock: () => number = Date.now) =>
    new Feedback({
      store,
      secret: () => Promise.resolve('store-test-secret-0123456789'),
      settings: DEFAULT_SETTINGS,
      scope: 'key',
      now: clock,
    });

  it('tallies each address once, by its latest decisive event; catch-all domains join the key rate once', async () => {
    const feedback = feedbackOf(makeStore(DEFAULT_SETTINGS.retentionMs));
    const now = Date.now();
    await feedback.report('k1', [
      { email: 'a@one.example', outcome: 'delivered', at: now - 100 * H, source: 'api' },
      { email: 'A@One.example', outcome: 'delivered', at: now - 90 * H, source: 'sendgrid' },
      { email: 'b@one.example', outcome: 'hard_bounce', at: now - 80 * H, source: 'api' },
      { email: 'b@one.example', outcome: 'delivered', at: now - 70 * H, source: 'api' },
      { email: 'c@one.example', outcome: 'hard_bounce', at: now - 60 * H, source: 'api' },
      { email: 'c@one.example', outcome: 'soft_bounce', at: now - 50 * H, source: 'api' },
    ]);
    let known = await feedback.recall('k1', ['a@one.example', 'b@one.example', 'c@one.example', 'new@one.example']);
    expect(known.get('a@one.example')).toMatchObject({ effect: 'delivered', history: { deliveries: 2, bounces: 0 } });
    expect(known.get('b@one.example')?.effect).toBe('none'); // delivered 70 h ago: not settled yet
    expect(known.get('c@one.example')).toMatchObject({ effect: 'known_bounce', history: { bounces: 1, deliveries: 0 } });
    expect(known.get('new@one.example')?.history).toBeNull();
    // Domain 2 delivered, 1 bounced; the key has no catch-all domain yet: m = 0.75.
    expect(known.get('new@one.example')?.probability).toBeCloseTo((7.5 + 2) / 13, 2);
    await feedback.remember('k1', [{ address: 'x@one.example', verdict: 'risky', reason: 'accept_all', score: 60, catchAll: true }]);
    await feedback.remember('k1', [{ address: 'y@one.example', verdict: 'risky', reason: 'accept_all', score: 60, catchAll: true }]);
    known = await feedback.recall('k1', ['new@one.example']);
    const m = (3 + 2) / (4 + 3);
    expect(known.get('new@one.example')?.probability).toBeCloseTo((10 * m + 2) / 13, 2);
    // Another key sees nothing of it.
    const other = await feedback.recall('k2', ['c@one.example', 'new@one.example']);
    expect(other.get('c@one.example')).toEqual({ effect: 'none', history: null, probability: 0.75 });
  });

  it('keeps history newest first, the last 20 verifications, nothing older than the retention', async () => {
    let clock = Date.now();
    const feedback = feedbackOf(makeStore(10 * H), () => clock);
    await feedback.report('k1', [
      { email: 'h@two.example', outcome: 'delivered', at: clock - 20 * H, source: 'api' },
      { email: 'h@two.example', outcome: 'hard_bounce', at: clock - 2 * H, source: 'postmark' },
    ]);
    for (let i = 0; i < 25; i++)
      await feedback.remember('k1', [{ address: 'h@two.example', verdict: 'risky', reason: 'accept_all', score: 30 + i, catchAll: true }]);
    const history = await feedback.history('k1', 'H@two.example');
    expect(history?.email).toBe('H@two.example');
    expect(history?.verifications).toHaveLength(20);
    expect(history?.verifications[0]?.score).toBe(54);
    // The delivery is older than the retention (10 h): left out.
    expect(history?.events).toEqual([{ at: new Date(clock - 2 * H).toISOString(), outcome: 'hard_bounce', source: 'postmark' }]);
    clock += 11 * H;
    expect((await feedback.history('k1', 'h@two.example'))?.events).toEqual([]);
    expect(await feedback.history('k1', 'not an address')).toBeNull();
  });
});

describe('redis feedback store at rest', () => {
  it('holds no address, expires every key, keeps one hash secret per deployment', async () => {
    const keyPrefix = `${prefix}:rest`;
    const secret = await sharedHashSecret(redis, keyPrefix, () => 'first-secret-0123456789');
    expect(await sharedHashSecret(redis, keyPrefix, () => 'second-secret-0123456789')).toBe(secret);
    const feedback = new Feedback({
      store: new RedisFeedbackStore(redis, keyPrefix, DEFAULT_SETTINGS.retentionMs),
      secret: () => Promise.resolve(secret),
      settings: DEFAULT_SETTINGS,
      scope: 'key',
    });
    await feedback.report('k1', [{ email: 'Private.Person@secret-domain.example', outcome: 'hard_bounce', at: Date.now(), source: 'api' }]);
    await feedback.remember('k1', [
      { address: 'private.person@secret-domain.example', verdict: 'undeliverable', reason: 'known_bounce', score: 3, catchAll: null },
    ]);
    const keys = await redis.keys(`${keyPrefix}:fb:{k1}:*`);
    expect(keys.length).toBeGreaterThanOrEqual(4);
    for (const key of keys) {
      expect(key.toLowerCase()).not.toMatch(/private|secret-domain/);
      expect(await redis.ttl(key)).toBeGreaterThan(0);
      const type = await redis.type(key);
      const values = type === 'hash' ? Object.entries(await redis.hgetall(key)).flat() : await redis.lrange(key, 0, -1);
      for (const value of values) expect(value.toLowerCase()).not.toMatch(/private|secret-domain/);
    }
    await feedback.deleteKey('k1');
    expect(await redis.keys(`${keyPrefix}:fb:{k1}:*`)).toEqual([]);
  });
});
