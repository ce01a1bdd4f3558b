/**
 * The BullMQ dispatcher and consumer on the shared Redis (consumer in this process; the crash
 * and key-tool tests with real processes are in test/callbacks): the job's end states, the
 * secret read from Redis at each attempt, one delivery per event id, and enqueue failing fast
 * when Redis is unreachable.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { bullPrefix } from '@svc/jobs/bullmq';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { dropPrefix, startTcpProxy, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { WebhookSecretStore, verifySignature, type CallbackDispatcher, type CallbackEvent } from '@svc/webhooks';
import { CALLBACK_QUEUE, createBullCallbackDispatcher, startCallbackConsumer, type CallbackConsumer } from '@svc/webhooks/bullmq';
import { listCompleted } from './support/events.ts';
import { captureLogs, type CapturedLogs } from './support/logs.ts';
import { startReceiver, type Receiver, type Script } from './support/receiver.ts';

const prefix = uniquePrefix('callbacks');
let redis: Redis;
let secrets: WebhookSecretStore;
let queue: Queue;
let dispatcher: CallbackDispatcher;
const KEY_ID = 'a1b2c3d4e5f60718';

beforeAll(async () => {
  redis = createRedis(testRedisUrl(), 'request', 'test');
  await waitForRedis(redis, 5_000);
  secrets = new WebhookSecretStore(redis, prefix);
  queue = new Queue(CALLBACK_QUEUE, { connection: redis, prefix: bullPrefix(prefix, CALLBACK_QUEUE) });
  dispatcher = createBullCallbackDispatcher({ redis: testRedisUrl(), redisPrefix: prefix });
});
afterAll(async () => {
  await dispatcher.close();
  await queue.close();
  redis.disconnect();
  await dropPrefix(testRedisUrl(), prefix);
});

const running: Array<{ consumer: CallbackConsumer; receiver: Receiver }> = [];
afterEach(async () => {
  for (const { consumer, receiver } of running.splice(0)) {
    await consumer.close();
    await receiver.close();
  }
});

async function setUp(script: Script, options: { allowPrivate?: boolean; giveUpAfterMs?: number } = {}) {
  const receiver = await startReceiver(script);
  const logs: CapturedLogs = captureLogs();
  const consumer = startCallbackConsumer({
    redis: testRedisUrl(),
    redisPrefix: prefix,
    allowPrivate: options.allowPrivate ?? true,
    logger: logs.logger,
    schedule: { firstDelayMs: 100, maxDelayMs: 300, giveUpAfterMs: options.giveUpAfterMs ?? 60_000 },
    delivery: { timeoutMs: 1_000 },
  });
  running.push({ consumer, receiver });
  return { receiver, logs, consumer };
}

const stateOf = async (event: CallbackEvent) => (await queue.getJob(event.id))?.getState();

describe('BullMQ callbacks', () => {
  it('delivers after failures, signing each attempt with the key secret read from Redis at that moment', async () => {
    const before = await secrets.rotate(KEY_ID);
    let after = '';
    // The first attempt is answered (500) only once the secret has been rotated.
    const { receiver } = await setUp(async (_request, index) => {
      if (index > 0) return { status: 200 };
      after = await secrets.rotate(KEY_ID);
      return { status: 500 };
    });
    const event = listCompleted(receiver.origin, KEY_ID);
    await dispatcher.enqueue(event);
    await expect.poll(() => stateOf(event), { timeout: 10_000 }).toBe('completed');
    const [first, second] = receiver.requests;
    expect(verifySignature(first!.headers['x-signature'] as string, first!.body, before).ok).toBe(true);
    expect(verifySignature(second!.headers['x-signature'] as string, second!.body, after).ok).toBe(true);
    expect(verifySignature(second!.headers['x-signature'] as string, second!.body, before).ok).toBe(false);
    expect(receiver.requests.map((request) => request.headers['x-event-id'])).toEqual([event.id, event.id]);
    expect((await queue.getJob(event.id))?.returnvalue).toEqual({ status: 200, attempts: 2 });
  });

  it('stores an event id once: enqueueing the same event again does not deliver it twice', async () => {
    await secrets.rotate(KEY_ID);
    const { receiver } = await setUp(() => ({ status: 200 }));
    const event = listCompleted(receiver.origin, KEY_ID);
    await Promise.all([dispatcher.enqueue(event), dispatcher.enqueue(event)]);
    await expect.poll(() => stateOf(event), { timeout: 10_000 }).toBe('completed');
    const delivered = await queue.getJob(event.id);
    await dispatcher.enqueue(event);
    // Nothing was queued again: the one job of that id is the delivered one, still completed
    // (an event queued anew would be waiting or active, and delivered a second time).
    const after = await queue.getJob(event.id);
    expect(await after?.getState()).toBe('completed');
    expect(after?.timestamp).toBe(delivered?.timestamp);
    expect(await queue.getJobCounts('waiting', 'active', 'delayed')).toEqual({ waiting: 0, active: 0, delayed: 0 });
    expect(receiver.requests).toHaveLength(1);
  });

  it('gives up after the retry window: the job is failed with the last reason, and the log says so', async () => {
    await secrets.rotate(KEY_ID);
    const { receiver, logs } = await setUp(() => ({ status: 500 }), { giveUpAfterMs: 600 });
    const event = listCompleted(receiver.origin, KEY_ID);
    await dispatcher.enqueue(event);
    await expect.poll(() => stateOf(event), { timeout: 10_000 }).toBe('failed');
    const job = await queue.getJob(event.id);
    expect(job?.failedReason).toBe('HTTP 500');
    expect(job?.attemptsMade).toBe(receiver.requests.length);
    expect(receiver.requests.length).toBeGreaterThanOrEqual(3);
    expect(logs.lines.at(-1)).toMatchObject({ level: 50, eventId: event.id, reason: 'HTTP 500' });
  });

  it('by default refuses a private target at once: failed after one attempt, nothing sent', async () => {
    await secrets.rotate(KEY_ID);
    const { receiver, logs } = await setUp(() => ({ status: 200 }), { allowPrivate: false });
    const event = listCompleted(`https://127.0.0.1:${receiver.port}/cb`, KEY_ID);
    await dispatcher.enqueue(event);
    await expect.poll(() => stateOf(event), { timeout: 10_000 }).toBe('failed');
    expect((await queue.getJob(event.id))?.attemptsMade).toBe(1);
    expect(receiver.requests).toHaveLength(0);
    expect(logs.messages()).toContain('callback refused by the SSRF guard: not sent, not retried');
  });

  it('a malformed job in the queue is dropped, not retried and not fatal', async () => {
    const { logs } = await setUp(() => ({ status: 200 }));
    await queue.add('list.completed', { event: { id: 'x' } }, { jobId: 'evt_malformed' });
    await expect.poll(async () => (await queue.getJob('evt_malformed'))?.getState(), { timeout: 10_000 }).toBe('failed');
    expect(logs.messages()).toContain('malformed callback job dropped');
  });

  it('enqueue rejects, rather than hangs, when Redis is unreachable (the caller knows the event is not stored)', async () => {
    const proxy = await startTcpProxy(testRedisUrl());
    const cut = createBullCallbackDispatcher({ redis: proxy.url, redisPrefix: prefix });
    try {
      const event = listCompleted('https://hooks.example.com/cb', KEY_ID);
      await cut.enqueue(event);
      expect(await stateOf(event)).toBe('waiting');
      proxy.cut();
      // At once: whether or not the client has seen its connection close yet, the enqueue rejects.
      await expect(cut.enqueue(listCompleted('https://hooks.example.com/cb', KEY_ID))).rejects.toThrow();
    } finally {
      await cut.close();
      await proxy.close();
    }
  });
});
