/**
 * Callbacks end to end in distributed mode, with real processes: the key tool issues a key and
 * its webhook secret, the BullMQ dispatcher stores an event, a consumer process delivers it to a
 * real receiver on loopback that fails first (500, then no answer within the attempt deadline)
 * and checks the signature with the printed secret; a secret rotated with the key tool signs the
 * next attempt; and a consumer SIGKILLed mid-attempt loses nothing: the next one delivers both
 * the interrupted event and one enqueued while no consumer ran.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { bullPrefix } from '@svc/jobs/bullmq';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { dropPrefix, stopProcessTree, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { verifySignature, type CallbackDispatcher, type CallbackEvent } from '@svc/webhooks';
import { CALLBACK_QUEUE, createBullCallbackDispatcher } from '@svc/webhooks/bullmq';
import { listCompleted } from '../../libs/shared/webhooks/test/support/events.ts';
import { startReceiver, type ReceivedRequest, type Receiver, type Script } from '../../libs/shared/webhooks/test/support/receiver.ts';
import { keysCli, parseCreated, startConsumerProcess, type ConsumerProcess, type CreatedKey } from './support.ts';

const prefix = uniquePrefix('callbacks-e2e');
const keys = keysCli(prefix);
const TIMING = { firstDelayMs: 200, maxDelayMs: 400, attemptTimeoutMs: 1_000, lockDurationMs: 2_000 };

let redis: Redis;
let queue: Queue;
let dispatcher: CallbackDispatcher;
let receiver: Receiver;
let script: Script = () => ({ status: 200 });
let acme: CreatedKey;

beforeAll(async () => {
  redis = createRedis(testRedisUrl(), 'request', 'test');
  await waitForRedis(redis, 5_000);
  queue = new Queue(CALLBACK_QUEUE, { connection: redis, prefix: bullPrefix(prefix, CALLBACK_QUEUE) });
  dispatcher = createBullCallbackDispatcher({ redis: testRedisUrl(), redisPrefix: prefix });
  receiver = await startReceiver((request, index) => script(request, index));
  acme = parseCreated((await keys('create', '--name', 'acme')).stdout);
});
afterAll(async () => {
  await receiver.close();
  await dispatcher.close();
  await queue.close();
  redis.disconnect();
  await dropPrefix(testRedisUrl(), prefix);
});

const stateOf = async (event: CallbackEvent) => (await queue.getJob(event.id))?.getState();
const requestsFor = (event: CallbackEvent): ReceivedRequest[] =>
  receiver.requests.filter((request) => request.headers['x-event-id'] === event.id);
const signatureOf = (request: ReceivedRequest) => request.headers['x-signature'] as string;

describe('a consumer process delivering', () => {
  let consumer: ConsumerProcess;
  beforeAll(async () => {
    consumer = await startConsumerProcess(prefix, TIMING);
  });
  afterAll(async () => {
    expect(await stopProcessTree(consumer.child)).toBe(0);
  });

  it('retries a 500 and a hang past the deadline, then delivers: same event id, signed with the secret the key tool printed', async () => {
    script = (_request, index) => (index === 0 ? { status: 500 } : index === 1 ? 'hang' : { status: 200 });
    const event = listCompleted(`${receiver.origin}/hooks/acme?token=receiver-own-token`, acme.id);
    await dispatcher.enqueue(event);
    await expect.poll(() => stateOf(event), { timeout: 20_000 }).toBe('completed');

    const attempts = requestsFor(event);
    expect(attempts).toHaveLength(3);
    for (const attempt of attempts) {
      expect(attempt.body).toBe(event.body);
      expect(attempt.url).toBe('/hooks/acme?token=receiver-own-token');
      expect(verifySignature(signatureOf(attempt), attempt.body, acme.webhookSecret)).toMatchObject({ ok: true });
    }
    // The consumer's log lines come through a pipe, maybe a moment after the job completed.
    await expect.poll(() => consumer.logs().some((line) => line.eventId === event.id && line.msg === 'callback delivered')).toBe(true);
    const reasons = consumer
      .logs()
      .filter((line) => line.eventId === event.id && line.msg === 'callback attempt failed: will retry')
      .map((line) => line.reason);
    expect(reasons).toEqual(['HTTP 500', `no answer within ${TIMING.attemptTimeoutMs} ms`]);
    // Neither the secret nor the receiver's own token reach the logs.
    expect(consumer.output()).not.toContain(acme.webhookSecret);
    expect(consumer.output()).not.toContain('receiver-own-token');
  }, 40_000);

  it('signs with the new secret once `keys webhook-secret` has rotated it, and no longer with the old one', async () => {
    let rotated = false;
    script = () => (rotated ? { status: 200 } : { status: 500 });
    const event = listCompleted(receiver.origin, acme.id);
    await dispatcher.enqueue(event);
    await expect.poll(() => requestsFor(event).length, { timeout: 20_000 }).toBeGreaterThan(0);
    const rotation = await keys('webhook-secret', 'acme');
    const fresh = /^whsec_[A-Za-z0-9]{40}$/m.exec(rotation.stdout)?.[0];
    expect(fresh).toBeDefined();
    rotated = true;
    await expect.poll(() => stateOf(event), { timeout: 20_000 }).toBe('completed');

    const attempts = requestsFor(event);
    const [first, last] = [attempts[0]!, attempts.at(-1)!];
    expect(verifySignature(signatureOf(first), first.body, acme.webhookSecret).ok).toBe(true);
    expect(verifySignature(signatureOf(last), last.body, fresh!).ok).toBe(true);
    expect(verifySignature(signatureOf(last), last.body, acme.webhookSecret)).toEqual({ ok: false, reason: 'mismatch' });
    acme = { ...acme, webhookSecret: fresh! };
  }, 40_000);
});

describe('a consumer process killed mid-attempt', () => {
  const started: ConsumerProcess[] = [];
  afterEach(async () => {
    for (const consumer of started.splice(0)) await stopProcessTree(consumer.child, { signal: 'SIGKILL' });
  });

  it('loses nothing: after a restart both the interrupted event and one enqueued meanwhile are delivered', async () => {
    let killed = false;
    script = () => (killed ? { status: 200 } : 'hang');
    const first = await startConsumerProcess(prefix, TIMING);
    started.push(first);
    const interrupted = listCompleted(receiver.origin, acme.id);
    await dispatcher.enqueue(interrupted);
    await expect.poll(() => requestsFor(interrupted).length, { timeout: 20_000 }).toBe(1);

    await stopProcessTree(first.child, { signal: 'SIGKILL' });
    killed = true;
    // The dead consumer's job is still in Redis, locked until its lock expires.
    expect(await stateOf(interrupted)).toBe('active');
    const meanwhile = listCompleted(receiver.origin, acme.id);
    await dispatcher.enqueue(meanwhile);
    expect(await stateOf(meanwhile)).toBe('waiting');

    const second = await startConsumerProcess(prefix, TIMING);
    started.push(second);
    await expect.poll(() => stateOf(meanwhile), { timeout: 20_000 }).toBe('completed');
    await expect.poll(() => stateOf(interrupted), { timeout: 20_000 }).toBe('completed');

    // Polled: the log lines come through a pipe, maybe a moment after the job completed.
    await expect
      .poll(() =>
        second
          .logs()
          .filter((line) => line.eventId === interrupted.id)
          .map((line) => line.msg),
      )
      .toEqual(['callback attempt interrupted (its consumer died): tried again', 'callback delivered']);
    expect(requestsFor(interrupted)).toHaveLength(2);
    expect(requestsFor(meanwhile)).toHaveLength(1);
    for (const request of [...requestsFor(interrupted), ...requestsFor(meanwhile)])
      expect(verifySignature(signatureOf(request), request.body, acme.webhookSecret).ok).toBe(true);
  }, 60_000);
});
