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

/** A promise the test resolves: what a session waits on to end, so it holds its slot as long as the test needs. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

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
    /** A session that holds its slot until `until` settles (at once by default). */
    run(
      limiter: PrioritySessionLimiter,
      priority: SessionPriority,
      name: string,
      until: Promise<unknown> = Promise.resolve(),
      signal = new AbortController().signal,
    ) {
      return limiter.for(priority).run('192.0.2.1', signal, async () => {
        open += 1;
        openBy[priority] += 1;
        maxOpen = Math.max(maxOpen, open);
        maxBy[priority] = Math.max(maxBy[priority], openBy[priority]);
        started.push(name);
        await until;
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
    const held = gate();
    const limiters = two === undefined ? [one] : [one, two];
    const runs = Array.from({ length: 8 }, (_, i) =>
      t.run(limiters[i % limiters.length]!, i % 3 === 0 ? 'list' : 'batch', `s${i}`, held.opened),
    );
    // Every session holds its slot until all the others have been refused one: a limiter that let
    // a third in would have opened it by then.
    const waiting = () =>
      limiters.reduce((sum, limiter) => sum + limiter.waiting('192.0.2.1', 'batch') + limiter.waiting('192.0.2.1', 'list'), 0);
    await expect.poll(() => t.started.length + waiting(), { interval: 5 }).toBe(8);
    held.open();
    expect((await Promise.all(runs)).length).toBe(8);
    expect(t.maxOpen).toBe(2);
    expect(t.maxBy.list).toBe(1); // lists keep one slot free for batches
  });

  it('a batch waiting for a server goes before every list waiting for it', async () => {
    const [one, two] = await make(1);
    const other = two ?? one;
    const t = tracker();
    const held = gate();
    const holder = t.run(one, 'list', 'list-holding', held.opened);
    await expect.poll(() => t.started, { interval: 5 }).toContain('list-holding');
    const listWaiting = t.run(other, 'list', 'list-waiting');
    // The list's wait has begun (it was refused the slot) before the batch asks.
    await expect.poll(() => other.waiting('192.0.2.1', 'list'), { interval: 5 }).toBe(1);
    const batch = t.run(one, 'batch', 'batch');
    // Both wait for the slot when the holder ends.
    await expect.poll(() => one.waiting('192.0.2.1', 'batch'), { interval: 5 }).toBe(1);
    held.open();
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
    const held = gate();
    const holder = t.run(one, 'batch', 'holder', held.opened);
    const controller = new AbortController();
    const waiting = t.run(one, 'batch', 'waiter', undefined, controller.signal);
    await expect.poll(() => one.waiting('192.0.2.1', 'batch'), { interval: 5 }).toBe(1);
    controller.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('deadline');
    held.open();
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
    const held = gate();
    const long = t.run(limiter, 'batch', 'long', held.opened);
    await expect.poll(() => t.started, { interval: 5 }).toContain('long');
    const slots = `${prefix}-1-300:smtp-slots:{192.0.2.1}`;
    const [, firstExpiry] = await redis.zrange(slots, 0, 0, 'WITHSCORES');
    const next = t.run(limiter, 'batch', 'next');
    // A refused batch marks its wait with its attempt's time plus the wait's lease (5 polls of
    // 20 ms and 1 s): `long` ends once `next` has been refused 100 ms after the first lease ran out.
    const refusedAfter = Number(firstExpiry) + 100 + 20 * 5 + 1_000;
    await expect
      .poll(async () => Number((await redis.zrange(`${prefix}-1-300:smtp-waiting:{192.0.2.1}`, 0, 0, 'WITHSCORES'))[1] ?? 0), {
        timeout: 5_000,
        interval: 20,
      })
      .toBeGreaterThanOrEqual(refusedAfter);
    held.open();
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
