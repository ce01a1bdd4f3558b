/**
 * Session slots per mail server, batches first, in one process and across processes through
 * Redis: never more than the limit open, lists capped below it, a waiting batch served before
 * any list, a crashed holder's slot freed when its lease lapses, and work going on (counted
 * locally) when Redis is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import {
  LocalPriorityLimiter,
  RedisHostLimiter,
  type PrioritySessionLimiter,
  type SessionPriority,
} from '../../src/engine/shared-host-limiter.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs tasks and records how many were open at once, per priority and in all. */
function tracker() {
  let open = 0;
  let maxOpen = 0;
  const openBy: Record<SessionPriority, number> = { batch: 0, list: 0 };
  const maxBy: Record<SessionPriority, number> = { batch: 0, list: 0 };
  const started: string[] = [];
  return {
    started,
    get maxOpen() {
      return maxOpen;
    },
    maxBy,
    run(limiter: PrioritySessionLimiter, priority: SessionPriority, name: string, holdMs: number, signal = new AbortController().signal) {
      return limiter.for(priority).run('192.0.2.1', signal, async () => {
        open += 1;
        openBy[priority] += 1;
        maxOpen = Math.max(maxOpen, open);
        maxBy[priority] = Math.max(maxBy[priority], openBy[priority]);
        started.push(name);
        await sleep(holdMs);
        open -= 1;
        openBy[priority] -= 1;
        return name;
      });
    },
  };
}

const url = testRedisUrl();
const prefix = uniquePrefix('slots');
const clients: Redis[] = [];
afterAll(async () => {
  for (const client of clients) client.disconnect();
  await dropPrefix(url, prefix);
});

async function redisLimiter(perHost: number, slotTtlMs?: number): Promise<RedisHostLimiter> {
  const redis = createRedis(url, 'request', 'test-slots');
  clients.push(redis);
  await waitForRedis(redis, 5_000);
  return new RedisHostLimiter({
    redis,
    prefix: `${prefix}-${perHost}-${slotTtlMs ?? 0}`,
    perHost,
    ...(slotTtlMs === undefined ? {} : { slotTtlMs }),
  });
}

describe.each([
  ['in one process', (perHost: number) => Promise.resolve([new LocalPriorityLimiter(perHost), undefined] as const)],
  ['across processes (Redis)', async (perHost: number) => [await redisLimiter(perHost), await redisLimiter(perHost)] as const],
])('%s', (_name, make) => {
  it('never opens more than the limit to one server, however many ask', async () => {
    const [one, two] = await make(2);
    const t = tracker();
    const runs = Array.from({ length: 8 }, (_, i) =>
      t.run(i % 2 === 0 || two === undefined ? one : two, i % 3 === 0 ? 'list' : 'batch', `s${i}`, 60),
    );
    expect((await Promise.all(runs)).length).toBe(8);
    expect(t.maxOpen).toBe(2);
    expect(t.maxBy.list).toBe(1); // lists keep one slot free for batches
  });

  it('a batch waiting for a server goes before every list waiting for it', async () => {
    const [one, two] = await make(1);
    const other = two ?? one;
    const t = tracker();
    const holder = t.run(one, 'list', 'list-holding', 300);
    await expect.poll(() => t.started, { interval: 5 }).toContain('list-holding');
    const listWaiting = t.run(other, 'list', 'list-waiting', 10);
    // The list's wait has begun (it was refused the slot) before the batch asks.
    await expect.poll(() => other.waiting('192.0.2.1', 'list'), { interval: 5 }).toBe(1);
    const batch = t.run(one, 'batch', 'batch', 10);
    await Promise.all([holder, listWaiting, batch]);
    expect(t.started).toEqual(['list-holding', 'batch', 'list-waiting']);
  });

  it("a parked connection's slot: a batch takes it over at once; a list only while no batch waits for the server", async () => {
    const [one, two] = await make(1);
    const other = two ?? one;
    const host = '192.0.2.1';
    // A list's session ended and its connection was parked: the slot stays held. Parked
    // connections belong to the process that parked them: `one` adopts; `other` is another worker.
    const parked = await one.for('list').acquire(host, new AbortController().signal);
    const taken = await one.for('batch').adopt(parked);
    expect(taken).toBeDefined();
    // Still one slot in all: a new session waits for it.
    const late = new AbortController();
    setTimeout(() => late.abort(new Error('waited')), 100);
    await expect(other.for('batch').acquire(host, late.signal)).rejects.toThrow('waited');
    // A batch waiting: the list may not take the parked connection's slot; its holder ends it and the batch gets the slot.
    const waiting = other.for('batch').acquire(host, new AbortController().signal);
    await expect.poll(() => other.waiting(host, 'batch'), { interval: 5 }).toBe(1);
    expect(await one.for('list').adopt(taken!)).toBeUndefined();
    taken!.release();
    (await waiting).release();
    // With nobody waiting, a list takes it over.
    const again = await one.for('batch').acquire(host, new AbortController().signal);
    const byList = await one.for('list').adopt(again);
    expect(byList).toBeDefined();
    again.release(); // a handle taken over gives nothing back
    const blocked = new AbortController();
    setTimeout(() => blocked.abort(new Error('still held')), 100);
    await expect(other.for('batch').acquire(host, blocked.signal)).rejects.toThrow('still held');
    byList!.release();
    (await other.for('batch').acquire(host, new AbortController().signal)).release();
  });

  it('a waiter gives up when its signal aborts', async () => {
    const [one] = await make(1);
    const t = tracker();
    const holder = t.run(one, 'batch', 'holder', 300);
    const controller = new AbortController();
    const waiting = t.run(one, 'batch', 'waiter', 10, controller.signal);
    setTimeout(() => controller.abort(new Error('deadline')), 50);
    await expect(waiting).rejects.toThrow('deadline');
    await holder;
    expect(t.started).toEqual(['holder']);
  });
});

describe('across processes (Redis): leases', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = createRedis(url, 'request', 'test-slots-raw');
    clients.push(redis);
    await waitForRedis(redis, 5_000);
  });

  it('a crashed holder frees its slot when its lease lapses', async () => {
    const limiter = await redisLimiter(1, 400);
    // What a worker SIGKILLed mid-session leaves: a lease nobody renews.
    const slots = `${prefix}-1-400:smtp-slots:{192.0.2.1}`;
    await redis.zadd(slots, Date.now() + 400, 'b:crashed-worker');
    const started = Date.now();
    await limiter.for('batch').run('192.0.2.1', new AbortController().signal, () => Promise.resolve('ran'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('a long session keeps its lease renewed', async () => {
    const limiter = await redisLimiter(1, 300);
    const t = tracker();
    const long = t.run(limiter, 'batch', 'long', 1_000);
    await expect.poll(() => t.started, { interval: 5 }).toContain('long');
    const next = t.run(limiter, 'batch', 'next', 10);
    await Promise.all([long, next]);
    expect(t.maxOpen).toBe(1);
  });

  it('without Redis, a session waits and says so instead of counting in the process (which would multiply the limit)', async () => {
    const gone = createRedis('redis://127.0.0.1:1', 'request', 'test-slots-gone');
    clients.push(gone);
    let unavailable = 0;
    const limiter = new RedisHostLimiter({
      redis: gone,
      prefix,
      perHost: 1,
      unavailablePollMs: 20,
      onUnavailable: () => (unavailable += 1),
    });
    let opened = 0;
    const deadline = AbortSignal.timeout(300);
    const session = limiter.for('batch').run('192.0.2.9', deadline, () => {
      opened += 1;
      return Promise.resolve();
    });
    await expect(session).rejects.toThrow();
    expect(opened).toBe(0);
    expect(unavailable).toBeGreaterThan(1);
    expect(limiter.available).toBe(false);
  });
});
