/** The provider back-off, in memory and in Redis: doubling, one probe after it ends, reset by a clean session. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, waitForRedis } from '@svc/jobs/redis';
import { findRedis, type FoundRedis } from '@svc/testkit';
import { MemoryBackoffStore, RedisBackoffStore, MAX_BACKOFF_MS, type BackoffStore } from '../../src/politeness/provider-backoff.ts';

let redis: FoundRedis;
let client: ReturnType<typeof createRedis>;
beforeAll(async () => {
  redis = await findRedis();
  client = createRedis(redis.url, 'request');
  await waitForRedis(client, 5_000);
});
afterAll(async () => {
  client.disconnect();
  await redis.stop();
});

const stores: Array<[string, () => BackoffStore]> = [
  ['memory', () => new MemoryBackoffStore({ baseMs: 1_000 })],
  ['redis', () => new RedisBackoffStore(client, `backoff-test-${Date.now()}-${Math.random()}`, { baseMs: 1_000 })],
];

describe.each(stores)('%s back-off store', (_kind, make) => {
  it('no back-off: admitted; a throttle: refused until it ends, then one probe, the others wait for it', async () => {
    const store = make();
    const t = 1_000_000;
    expect(await store.admit('google', 'direct', t)).toEqual({ admitted: true, probe: false });
    const state = await store.throttle('google', 'direct', t, undefined);
    expect(state).toEqual({ until: t + 1_000, delayMs: 1_000, at: t });
    expect(await store.admit('google', 'direct', t + 500)).toEqual({ admitted: false, until: t + 1_000 });
    // Another egress and another provider are not held back.
    expect(await store.admit('google', 'proxy:1080', t + 500)).toEqual({ admitted: true, probe: false });
    expect(await store.admit('microsoft', 'direct', t + 500)).toEqual({ admitted: true, probe: false });
    expect(await store.admit('google', 'direct', t + 1_000)).toEqual({ admitted: true, probe: true });
    expect((await store.admit('google', 'direct', t + 1_001)).admitted).toBe(false);
  });

  it('doubles on consecutive throttles up to 15 minutes, honours a longer asked delay, and a clean session after it resets', async () => {
    const store = make();
    let t = 2_000_000;
    let delays: number[] = [];
    for (let i = 0; i < 12; i++) {
      const state = await store.throttle('yahoo', 'direct', t, undefined);
      delays.push(state.delayMs);
      t = state.until; // the probe at the end is throttled again
    }
    expect(delays.slice(0, 4)).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(Math.max(...delays)).toBe(MAX_BACKOFF_MS);
    // A throttle while the back-off runs (another session cut by it) does not double it.
    const running = await store.throttle('yahoo', 'direct', t - 10, undefined);
    expect(running.delayMs).toBe(MAX_BACKOFF_MS);
    // A session begun before the throttle ends cleanly: no reset; one begun after it: reset.
    const last = (await store.peek('yahoo', 'direct'))!;
    await store.clear('yahoo', 'direct', last.at - 1);
    expect(await store.peek('yahoo', 'direct')).toBeDefined();
    await store.clear('yahoo', 'direct', last.at + 1);
    expect(await store.peek('yahoo', 'direct')).toBeUndefined();
    delays = [(await store.throttle('yahoo', 'direct', t, 300_000)).delayMs];
    expect(delays).toEqual([300_000]);
  });
});
