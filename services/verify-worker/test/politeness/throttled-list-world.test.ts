/**
 * A list of a few hundred addresses at a provider that throttles (several MX hosts, a per-client
 * limit, `421` beyond it and a block each attempt re-arms), met while the provider still blocks
 * this client: the list waits for the back-off, retries its throttled addresses (`retrying`),
 * stays within its budgets afterwards (never throttled again) and completes with every
 * mailbox's real verdict. Through the list work as assembled for a worker (memory store and
 * queue, as embedded mode runs it).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@svc/config';
import { MemoryListQueue, MemoryListStore, WORK_CHUNK_SIZE } from '@svc/lists';
import { MemoryMeter } from '@svc/metering';
import { createRigThrottle, type Zone } from '@svc/testkit';
import { LocalPriorityLimiter } from '../../src/engine/shared-host-limiter.ts';
import { createListProcessor } from '../../src/lists/assemble.ts';
import { FAST_TUNING, useWorld } from '../engine/world.ts';
import { runUntilCompleted, storeAddressList } from '../lists/stored-list.ts';

const GOOGLE = ['gmail-smtp-in.l.google.com', 'alt1.gmail-smtp-in.l.google.com', 'alt2.gmail-smtp-in.l.google.com'];
const IPS = ['127.0.0.210', '127.0.0.211', '127.0.0.212'];
const ADDRESSES = 200;
const KNOWN = (i: number) => i % 10 < 7;
const address = (i: number) => `u${i}@gl.test`;

// 120 RCPTs per client in any 2 s; beyond, 421-4.7.28 and a 1 s block re-armed by each attempt.
const throttle = createRigThrottle({ perWindow: 120, windowMs: 2_000, blockMs: 1_000 });
const zone: Zone = {
  'gl.test': { MX: GOOGLE.map((name, i): [number, string] => [5 + 10 * i, name]) },
  ...Object.fromEntries(GOOGLE.map((name, i) => [name, { A: [IPS[i]!] }])),
};
const users = [
  ...Array.from({ length: ADDRESSES }, (_, i) => i)
    .filter(KNOWN)
    .map(address),
  'postmaster@gl.test',
];
const world = useWorld(zone, Object.fromEntries(IPS.map((ip) => [ip, { users, throttle }])));

describe('a list at a provider that throttles', () => {
  it('waits for the back-off, retries, keeps under the limit it learnt and completes with every real verdict', async () => {
    const config = loadConfig(
      world.env({
        VERIFY_BATCH_DEADLINE_MS: '4000',
        VERIFY_THROTTLE_BACKOFF_MS: '1500',
        // The budget an operator sets from the provider's rate: 60 RCPTs a 2 s window (lists 48), below its 120.
        VERIFY_PROVIDER_BUDGET_WINDOW_MS: '2000',
        VERIFY_PROVIDER_BUDGETS: '{"google":{"sessionsPerMinute":4,"recipientsPerSession":20,"recipientsPerMinute":60}}',
        LIST_RETRY_DELAYS_S: '1',
      }),
    );
    // An earlier burst (another tool on this address) left the provider blocking this client.
    throttle.block('127.0.0.1');
    expect(throttle.blocked('127.0.0.1')).toBe(true);
    const repliesBefore = throttle.replies;

    const store = new MemoryListStore();
    const queue = new MemoryListQueue({ concurrency: 2 });
    const processor = createListProcessor({
      config,
      store,
      queue,
      meter: new MemoryMeter(),
      limiter: new LocalPriorityLimiter(config.VERIFY_MAX_CONNECTIONS_PER_HOST).for('list'),
      tuning: FAST_TUNING,
    });
    const id = 'lst_00000000000000000000000t';
    const { items, jobs } = await storeAddressList(
      store,
      id,
      Array.from({ length: ADDRESSES }, (_, i) => address(i)),
      WORK_CHUNK_SIZE,
    );
    const { statuses, tookMs } = await runUntilCompleted({ store, id, jobs }, queue, processor.handle, 80_000);
    const seconds = tookMs / 1_000;
    const record = await store.get(id);
    const known = items.filter(([i]) => KNOWN(i)).length;
    expect(record?.summary).toEqual({ deliverable: known, risky: 0, undeliverable: ADDRESSES - known });
    const results = await store.results(
      id,
      items.map(([i]) => i),
    );
    expect(results.map((result) => result?.result.reason)).toEqual(items.map(([i]) => (KNOWN(i) ? 'accepted_email' : 'rejected_email')));
    expect(statuses.has('retrying') || statuses.has('running')).toBe(true);
    // The first sessions met the block (two chunks at once may both open one before either learnt
    // it); none after the back-off began, and never throttled again by rate: every throttle reply
    // was one of those first greetings.
    expect(throttle.connectionsWhileBlocked).toBeLessThanOrEqual(2);
    expect(throttle.replies - repliesBefore).toBe(throttle.connectionsWhileBlocked);
    // At most 48 RCPTs a 2 s window for a list: the 200 addresses and their controls take several windows.
    expect(seconds).toBeGreaterThan(4);
  }, 90_000);
});
