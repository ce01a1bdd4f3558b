/**
 * Bundles over a real Redis with real BullMQ workers: jobs of a bundled kind submitted together
 * travel in one queue job, and each is still answered, failed, timed out, withdrawn and taken over
 * as a job of its own would be.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Queue, type Worker } from 'bullmq';
import { ApiError } from '@svc/contracts';
import { CallerGoneError } from '@svc/jobs';
import { BullTransport, bullPrefix, inboxKey, startBullWorker } from '@svc/jobs/bullmq';
import { createRedis } from '@svc/jobs/redis';
import { dropPrefix, spawnNode, stopProcessTree, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { JobSender } from '../src/job-bundles.ts';
import { JOB_PROTOCOL_VERSION } from '../src/job-protocol.ts';
import { ECHO_BUNDLED_JOB, echoBundledHandler, type EchoPayload } from './fixtures/echo-job.ts';

const QUEUE = ECHO_BUNDLED_JOB.name;
const NOT_TAKEN = `No ${QUEUE} worker took this job before the request deadline: none is running, or all were busy.`;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gateway(): Promise<{ transport: BullTransport; prefix: string; queue: Queue }> {
  const prefix = uniquePrefix('bundles');
  const transport = await BullTransport.create({ redis: testRedisUrl(), redisPrefix: prefix, kinds: [ECHO_BUNDLED_JOB] });
  cleanups.push(async () => {
    await transport.close();
    await dropPrefix(testRedisUrl(), prefix);
  });
  return { transport, prefix, queue: transport.queues()[0]! };
}

function worker(prefix: string, handler = echoBundledHandler): Worker {
  const started = startBullWorker(handler, { redis: testRedisUrl(), redisPrefix: prefix, concurrency: 4, takeoverMs: 2_000 });
  cleanups.push(async () => void (await started.close()));
  return started;
}

const submit = (transport: BullTransport, payload: EchoPayload, deadlineMs = 10_000, requestId = `req-${payload.value}`) =>
  transport.submit(ECHO_BUNDLED_JOB, payload as never, { deadlineMs, requestId });

/** The rejection of `promise`, which must reject. */
const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => expect.unreachable('resolved'),
    (reason: unknown) => reason,
  );

const waitingJobs = async (queue: Queue) => (await queue.getJobCounts('waiting')).waiting ?? 0;

describe('bundled jobs over BullMQ', () => {
  it('jobs submitted together travel in one queue job (at most 32 to one), each answered with its own result', async () => {
    const { transport, prefix, queue } = await gateway();
    const values = Array.from({ length: 40 }, (_, i) => `v${i}`);
    const answers = Promise.all(values.map((value) => submit(transport, { value })));
    await expect.poll(() => waitingJobs(queue), { timeout: 5_000 }).toBe(2);
    const jobs = await queue.getJobs(['waiting']);
    expect(jobs.map((job) => (job.data as { bundle: unknown[] }).bundle.length).sort()).toEqual([32, 8]);
    // The gateway reads framed answers (reply-channel.ts): the bundle says so for all its jobs.
    for (const job of jobs) expect(job.data).toMatchObject({ replyTo: transport.inboxKey, framedReplies: true });
    let completed = 0;
    worker(prefix).on('completed', () => (completed += 1));
    await expect(answers).resolves.toEqual(values.map((value) => ({ value: value.toUpperCase() })));
    // Answers go out before BullMQ ends the job: its `completed` event may come a moment later.
    await expect.poll(() => completed).toBe(2);
  });

  it('a lone job on an idle gateway travels as a job of its own', async () => {
    const { transport, prefix, queue } = await gateway();
    const answer = submit(transport, { value: 'alone' });
    await expect.poll(() => waitingJobs(queue), { timeout: 5_000 }).toBe(1);
    const [job] = await queue.getJobs(['waiting']);
    expect(job?.data).toMatchObject({ payload: { value: 'alone' }, requestId: 'req-alone', framedReplies: true });
    expect(job?.data).not.toHaveProperty('bundle');
    worker(prefix);
    await expect(answer).resolves.toEqual({ value: 'ALONE' });
  });

  it('a job failing in a bundle fails alone, as internal_error naming its own request id', async () => {
    const { transport, prefix } = await gateway();
    worker(prefix);
    const [first, failing, last] = await Promise.allSettled([
      submit(transport, { value: 'a' }),
      submit(transport, { value: 'b', fail: true }),
      submit(transport, { value: 'c' }),
    ]);
    expect(first).toEqual({ status: 'fulfilled', value: { value: 'A' } });
    expect(last).toEqual({ status: 'fulfilled', value: { value: 'C' } });
    expect(failing.status).toBe('rejected');
    const error = (failing as PromiseRejectedResult).reason as unknown;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'internal_error', details: { requestId: 'req-b' } });
  });

  it('with no worker, each job times out saying no worker took it; the bundle stays queued until the last of its jobs gives up, then leaves, payload and all', async () => {
    const { transport, prefix, queue } = await gateway();
    const early = submit(transport, { value: 'early' }, 400);
    const late = submit(transport, { value: 'late' }, 1_500);
    await expect(rejection(early)).resolves.toMatchObject({ code: 'timeout', message: NOT_TAKEN });
    expect(await waitingJobs(queue)).toBe(1);
    await expect(rejection(late)).resolves.toMatchObject({ code: 'timeout', message: NOT_TAKEN });
    await expect.poll(() => waitingJobs(queue), { timeout: 5_000 }).toBe(0);
    const redis = createRedis(testRedisUrl(), 'blocking');
    try {
      expect(await redis.keys(`${bullPrefix(prefix, QUEUE)}:${QUEUE}:*-*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  it('a caller who leaves does not take its bundle away from the others: they are answered once a worker comes', async () => {
    const { transport, prefix, queue } = await gateway();
    const leaving = transport.submit(ECHO_BUNDLED_JOB, { value: 'gone' } as never, {
      deadlineMs: 10_000,
      requestId: 'req-gone',
      callerGone: AbortSignal.timeout(200),
    });
    const staying = submit(transport, { value: 'stays' });
    await expect(rejection(leaving)).resolves.toBeInstanceOf(CallerGoneError);
    // Nothing happens: the withdrawal the leaving caller sends as it leaves does not take the bundle away.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await waitingJobs(queue)).toBe(1);
    worker(prefix);
    await expect(staying).resolves.toEqual({ value: 'STAYS' });
  });

  it("a crashed worker's bundle is taken over by another worker, and every job in it answered", async () => {
    const { transport, prefix } = await gateway();
    const script = fileURLToPath(new URL('./fixtures/crashing-worker.ts', import.meta.url));
    const child = spawnNode(script, { args: [testRedisUrl(), prefix, 'bundled'] });
    cleanups.push(async () => void (await stopProcessTree(child, { signal: 'SIGKILL' })));
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await expect.poll(() => output.includes('ready'), { timeout: 10_000 }).toBe(true);
    const answers = Promise.all(['x', 'y', 'z'].map((value) => submit(transport, { value }, 20_000)));
    await expect.poll(() => output.split('took-job').length - 1, { timeout: 10_000 }).toBe(3);
    await stopProcessTree(child, { signal: 'SIGKILL' });
    worker(prefix);
    await expect(answers).resolves.toEqual([{ value: 'X' }, { value: 'Y' }, { value: 'Z' }]);
  });
});

describe('withdrawing a job', () => {
  it('a job a worker ran and removed is not taken for one no worker took (BullMQ removing a job that is gone answers 1)', async () => {
    const prefix = uniquePrefix('withdraw');
    const queue = new Queue(QUEUE, { connection: { url: testRedisUrl() }, prefix: bullPrefix(prefix, QUEUE) });
    cleanups.push(async () => {
      await queue.close();
      await dropPrefix(testRedisUrl(), prefix);
    });
    const sender = new JobSender(queue, false, { addMs: 2_000, withdrawMs: 1_000 });
    const envelope = { payload: { value: 'done' }, deadlineAt: Date.now() + 10_000, requestId: 'req-done' };
    const sent = await sender.send(envelope, 'done-1');
    worker(prefix);
    await expect.poll(async () => queue.getJob('done-1'), { timeout: 5_000 }).toBeUndefined();
    await expect(sent.withdraw()).resolves.toBe(false);
  });
});

describe('a worker running a bundle', () => {
  /** A queue to add bundles by hand, a worker counting what it runs, and an inbox to read the answers from. */
  function rig() {
    const prefix = uniquePrefix('bundle-worker');
    const queue = new Queue(QUEUE, { connection: { url: testRedisUrl() }, prefix: bullPrefix(prefix, QUEUE) });
    const inbox = inboxKey(prefix, randomUUID());
    const redis = createRedis(testRedisUrl(), 'blocking');
    cleanups.push(async () => {
      await queue.close();
      redis.disconnect();
      await dropPrefix(testRedisUrl(), prefix);
    });
    const ran: string[] = [];
    const counting = {
      ...echoBundledHandler,
      handle: (payload: unknown, context: Parameters<typeof echoBundledHandler.handle>[1]) => {
        ran.push(context.requestId);
        return echoBundledHandler.handle(payload, context);
      },
    };
    const running = worker(prefix, counting);
    const ended: string[] = [];
    running.on('completed', () => ended.push('completed'));
    running.on('failed', () => ended.push('failed'));
    const answers = async () => (await redis.lrange(inbox, 0, -1)).map((message) => JSON.parse(message) as unknown).reverse();
    return { queue, inbox, ran, ended, answers };
  }

  const member = (replyId: string, value: string, deadlineAt: number, extra: Partial<EchoPayload> = {}) => ({
    replyId,
    payload: { value, ...extra },
    deadlineAt,
    requestId: `req-${replyId}`,
  });

  it('answers each job on its own: one past its deadline unrun, one failing, one done; the bundle itself ends as done', async () => {
    const { queue, inbox, ran, ended, answers } = rig();
    const future = Date.now() + 10_000;
    const bundle = [member('r1', 'late', Date.now() - 1), member('r2', 'bad', future, { fail: true }), member('r3', 'good', future)];
    await queue.add(QUEUE, { bundle, deadlineAt: future, requestId: 'req-r1', replyTo: inbox });
    await expect.poll(answers, { timeout: 5_000 }).toHaveLength(3);
    expect(await answers()).toEqual([
      { v: JOB_PROTOCOL_VERSION, jobId: 'r1', ok: false, reason: 'deadline passed before a worker took the job' },
      { v: JOB_PROTOCOL_VERSION, jobId: 'r2', ok: false, reason: 'handler bug' },
      { v: JOB_PROTOCOL_VERSION, jobId: 'r3', ok: true, result: { value: 'GOOD' } },
    ]);
    expect(ran.sort()).toEqual(['req-r2', 'req-r3']);
    await expect.poll(() => ended).toEqual(['completed']);
  });

  it('drops a bundle all of whose jobs are past their deadline unrun, answering each why', async () => {
    const { queue, inbox, ran, ended, answers } = rig();
    const past = Date.now() - 1;
    await queue.add(QUEUE, {
      bundle: [member('p1', 'a', past), member('p2', 'b', past)],
      deadlineAt: past,
      requestId: 'req-p1',
      replyTo: inbox,
    });
    await expect.poll(answers, { timeout: 5_000 }).toHaveLength(2);
    const reason = 'deadline passed before a worker took the job';
    expect(await answers()).toEqual([
      { v: JOB_PROTOCOL_VERSION, jobId: 'p1', ok: false, reason },
      { v: JOB_PROTOCOL_VERSION, jobId: 'p2', ok: false, reason },
    ]);
    expect(ran).toEqual([]);
    await expect.poll(() => ended).toEqual(['failed']);
  });

  it('fails a bundle that breaks its shape, running nothing and answering nobody', async () => {
    const { queue, inbox, ran, ended, answers } = rig();
    const future = Date.now() + 10_000;
    await queue.add(QUEUE, {
      bundle: [{ replyId: 7, payload: {}, deadlineAt: future }],
      deadlineAt: future,
      requestId: 'req-x',
      replyTo: inbox,
    });
    await expect.poll(() => ended, { timeout: 5_000 }).toEqual(['failed']);
    expect(ran).toEqual([]);
    expect(await answers()).toEqual([]);
  });
});
