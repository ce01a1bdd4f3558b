/**
 * Both job transports honour one contract: validated results, `timeout` at the deadline,
 * `internal_error` with the request id when a job fails, a handler's ApiError as itself, a QR
 * payload at the operation's limits carried whole, and, over BullMQ, `service_unavailable`
 * fast when Redis is gone and a crashed worker's job retried by stalled-job handling.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue, QueueEvents, type Worker } from 'bullmq';
import { createRedis } from '@svc/jobs/redis';
import { ApiError, MARGIN, MAX_DATA_CODE_POINTS, QR_JOB, SCALE, qrToolInputSchema } from '@svc/contracts';
import { CallerGoneError, InProcessTransport, handleJob, registerHandler, type JobTransport } from '@svc/jobs';
import { BullTransport, bullPrefix, startBullWorker } from '@svc/jobs/bullmq';
import { dropPrefix, spawnNode, startTcpProxy, stopProcessTree, testRedisUrl, uniquePrefix } from '@svc/testkit';
import {
  ECHO_BUNDLED_JOB,
  ECHO_JOB,
  echoBundledHandler,
  echoHandler,
  handlerApiError,
  qrLimitsHandler,
  type EchoPayload,
} from './fixtures/echo-job.ts';

const submit = (transport: JobTransport, payload: EchoPayload, deadlineMs = 5_000, kind = ECHO_JOB) =>
  transport.submit(kind, payload as never, { deadlineMs, requestId: 'req-1' });

const submitLeaving = (transport: JobTransport, afterMs: number) =>
  transport.submit(ECHO_JOB, { value: 'gone' } as never, {
    deadlineMs: 5_000,
    requestId: 'req-gone',
    callerGone: AbortSignal.timeout(afterMs),
  });

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

/**
 * `takenWithinMs`: a deadline by which a worker has surely taken a job, on a loaded machine too
 * (in process at once, as it is submitted; over BullMQ a worker's pick-up).
 */
function sharedContract(
  name: string,
  make: () => Promise<{ transport: JobTransport; close: () => Promise<void> }>,
  kind = ECHO_JOB,
  takenWithinMs = 3_000,
) {
  describe(`${name}: the transport contract`, () => {
    const submitKind = (transport: JobTransport, payload: EchoPayload, deadlineMs?: number) => submit(transport, payload, deadlineMs, kind);
    let transport: JobTransport;
    let close: () => Promise<void>;
    beforeAll(async () => ({ transport, close } = await make()));
    afterAll(async () => close());

    it('returns the validated result of the handler', async () => {
      await expect(submitKind(transport, { value: 'abc' })).resolves.toEqual({ value: 'ABC' });
    });

    it('answers many concurrent jobs, each with its own result', async () => {
      const values = Array.from({ length: 50 }, (_, i) => `v${i}`);
      const results = await Promise.all(values.map((value) => submitKind(transport, { value })));
      expect(results.map((result) => result.value)).toEqual(values.map((value) => value.toUpperCase()));
    });

    it('a failed job is internal_error naming the request id', async () => {
      const error = await rejection(submitKind(transport, { value: 'x', fail: true }));
      expect(error.code).toBe('internal_error');
      expect(error.details).toEqual({ requestId: 'req-1' });
    });

    it.each(['content_too_long', 'service_unavailable'] as const)(
      'an ApiError the handler throws (%s) arrives as itself: code, message, details and headers',
      async (code) => {
        const error = await rejection(submitKind(transport, { value: 'x', apiError: code }));
        const thrown = handlerApiError(code);
        expect({ code: error.code, message: error.message, details: error.details, headers: error.headers }).toEqual({
          code: thrown.code,
          message: thrown.message,
          details: thrown.details,
          headers: thrown.headers,
        });
      },
    );

    it("a QR payload at the operation's limits reaches the handler whole", async () => {
      // What the qr_generate tool accepts at its highest limits, longest data in code points (two UTF-16 units each).
      const payload = qrToolInputSchema.parse({ data: '😀'.repeat(MAX_DATA_CODE_POINTS), scale: SCALE[1], margin: MARGIN[1] });
      const result = await transport.submit(QR_JOB, payload, { deadlineMs: 5_000, requestId: 'req-limits' });
      expect(result).toMatchObject({ ok: true, size: payload.scale, margin: payload.margin, body: payload.data });
    });

    it('a result that breaks its schema is internal_error, not passed on', async () => {
      expect((await rejection(submitKind(transport, { value: 'x', badResult: true }))).code).toBe('internal_error');
    });

    it('a job still running at the deadline is timeout, at the deadline', async () => {
      const started = Date.now();
      const error = await rejection(submitKind(transport, { value: 'slow', delayMs: 3_000 }, 400));
      expect(error.code).toBe('timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(390);
      expect(Date.now() - started).toBeLessThan(1_500);
    });

    it('a job a worker took and did not finish by the deadline gets the generic deadline message', async () => {
      const error = await rejection(submitKind(transport, { value: 'slow', delayMs: 6_000 }, takenWithinMs));
      expect(error.code).toBe('timeout');
      expect(error.message).toBe('The job did not finish within the request deadline.');
    });

    it('a caller that leaves ends its wait at once with CallerGoneError', async () => {
      const started = Date.now();
      const wait = transport.submit(kind, { value: 'gone', delayMs: 3_000 } as never, {
        deadlineMs: 5_000,
        requestId: 'req-gone',
        callerGone: AbortSignal.timeout(200),
      });
      await expect(wait).rejects.toBeInstanceOf(CallerGoneError);
      expect(Date.now() - started).toBeLessThan(2_000);
    });

    it('reports ready', async () => {
      await expect(transport.isReady()).resolves.toBe(true);
    });
  });
}

describe('in-process: a caller that leaves cancels its job', () => {
  it("the handler's signal aborts", async () => {
    let aborted = false;
    const watching = registerHandler(ECHO_JOB, (_payload, context) => {
      return new Promise((resolve) =>
        context.signal.addEventListener('abort', () => {
          aborted = true;
          resolve({ value: 'late' });
        }),
      );
    });
    const transport = new InProcessTransport([watching]);
    await expect(submitLeaving(transport, 100)).rejects.toBeInstanceOf(CallerGoneError);
    expect(aborted).toBe(true);
    await transport.close();
  });
});

describe('bullmq: a caller that leaves while a worker runs its job', () => {
  it("the handler's signal aborts in the worker, and the job ends at once", async () => {
    const url = testRedisUrl();
    const prefix = uniquePrefix('cancel');
    let taken = false;
    let abortedAfterMs: number | undefined;
    const watching = registerHandler(ECHO_JOB, (_payload, context) => {
      taken = true;
      const started = Date.now();
      return new Promise((resolve) =>
        context.signal.addEventListener('abort', () => {
          abortedAfterMs = Date.now() - started;
          resolve({ value: 'late' });
        }),
      );
    });
    const transport = await BullTransport.create({ redis: url, redisPrefix: prefix, kinds: [ECHO_JOB] });
    const worker = startBullWorker(watching, { redis: url, redisPrefix: prefix, concurrency: 1 });
    try {
      // The caller leaves after 300 ms; the job's deadline is 5 s away.
      await expect(submitLeaving(transport, 300)).rejects.toBeInstanceOf(CallerGoneError);
      expect(taken, 'a worker had taken the job').toBe(true);
      await expect.poll(() => abortedAfterMs, { timeout: 3_000, interval: 20 }).toBeDefined();
      expect(abortedAfterMs).toBeLessThan(2_000);
    } finally {
      await worker.close();
      await transport.close();
      await dropPrefix(url, prefix);
    }
  });
});

describe('a handler that gives up when its deadline aborts it', () => {
  it('fails as a timeout, not as the error it gave up with, even when its abort fired a moment before the wait', async () => {
    const givingUp = registerHandler(
      ECHO_JOB,
      (_payload, context) =>
        new Promise((_resolve, reject) => context.signal.addEventListener('abort', () => reject(new Error('gave up')), { once: true })),
    );
    const envelope = { payload: { value: 'x' }, deadlineAt: Date.now() + 50, requestId: 'req-give-up' };
    const error = await handleJob(ECHO_JOB, givingUp.handle, { value: 'x', delayMs: 0, fail: false, badResult: false }, envelope).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'timeout' });
  });
});

sharedContract(
  'in-process',
  () => {
    const transport = new InProcessTransport([echoHandler, qrLimitsHandler]);
    return Promise.resolve({ transport, close: () => transport.close() });
  },
  ECHO_JOB,
  500,
);

/** A BullMQ transport and worker of `handler`'s kind, under a prefix of their own. */
async function overBullmq(handler: typeof echoHandler, label: string) {
  const url = testRedisUrl();
  const prefix = uniquePrefix(label);
  const transport = await BullTransport.create({ redis: url, redisPrefix: prefix, kinds: [handler.kind, QR_JOB] });
  const worker = startBullWorker(handler, { redis: url, redisPrefix: prefix, concurrency: 8 });
  const qrWorker = startBullWorker(qrLimitsHandler, { redis: url, redisPrefix: prefix, concurrency: 1 });
  return {
    transport,
    close: async () => {
      await Promise.all([worker.close(), qrWorker.close()]);
      await transport.close();
      await dropPrefix(url, prefix);
    },
  };
}

sharedContract('bullmq', () => overBullmq(echoHandler, 'transport'));

// The same contract for a kind whose jobs travel in bundles under load (job-bundles.test.ts has the rest).
sharedContract('bullmq, bundled', () => overBullmq(echoBundledHandler, 'transport-bundled'), ECHO_BUNDLED_JOB);

describe('bullmq: failure behaviour', () => {
  const url = () => testRedisUrl();

  it('with no worker, the request answers timeout at its deadline saying no worker took it, and its job leaves the queue, payload and all', async () => {
    const prefix = uniquePrefix('noworker');
    const transport = await BullTransport.create({ redis: url(), redisPrefix: prefix, kinds: [ECHO_JOB] });
    try {
      const started = Date.now();
      const error = await rejection(submit(transport, { value: 'nobody' }, 500));
      expect(error.code).toBe('timeout');
      expect(error.message).toBe('No echo worker took this job before the request deadline: none is running, or all were busy.');
      expect(Date.now() - started).toBeLessThan(1_500);
      const queue = transport.queues()[0]!;
      await expect.poll(async () => (await queue.getJobCounts('waiting', 'active', 'failed')).waiting, { timeout: 5_000 }).toBe(0);
      const redis = createRedis(url(), 'blocking');
      expect(await redis.keys(`${prefix}:bull:{echo}:echo:*-*`)).toEqual([]);
      redis.disconnect();
    } finally {
      await transport.close();
      await dropPrefix(url(), prefix);
    }
  });

  it('a worker drops a job whose deadline passed unrun, says why, and keeps nothing of it', async () => {
    const prefix = uniquePrefix('expired');
    const queue = new Queue('echo', { connection: { url: url() }, prefix: bullPrefix(prefix, 'echo') });
    const events = new QueueEvents('echo', { connection: { url: url() }, prefix: bullPrefix(prefix, 'echo') });
    await events.waitUntilReady();
    let handled = 0;
    const counting = {
      ...echoHandler,
      // A handler may answer synchronously (JobHandler: R | Promise<R>): no async wrapper without an await.
      handle: (payload: unknown, context: Parameters<typeof echoHandler.handle>[1]) => {
        handled += 1;
        return echoHandler.handle(payload, context);
      },
    };
    const worker = startBullWorker(counting, { redis: url(), redisPrefix: prefix, concurrency: 1 });
    try {
      const failed = new Promise<string>((resolve) => events.on('failed', ({ failedReason }) => resolve(failedReason)));
      await queue.add('echo', { payload: { value: 'late' }, deadlineAt: Date.now() - 1, requestId: 'req-late' }, { jobId: 'late-1' });
      await expect(failed).resolves.toBe('deadline passed before a worker took the job');
      expect(handled).toBe(0);
      await expect.poll(async () => queue.getJob('late-1')).toBeUndefined();
    } finally {
      await worker.close();
      await events.close();
      await queue.close();
      await dropPrefix(url(), prefix);
    }
  });

  it('a caller that leaves while its job is still queued: the job is removed with its payload', async () => {
    const prefix = uniquePrefix('gone');
    const transport = await BullTransport.create({ redis: url(), redisPrefix: prefix, kinds: [ECHO_JOB] });
    try {
      const wait = submitLeaving(transport, 300);
      await expect(wait).rejects.toBeInstanceOf(CallerGoneError);
      const queue = transport.queues()[0]!;
      await expect.poll(async () => (await queue.getJobCounts('waiting')).waiting, { timeout: 5_000 }).toBe(0);
    } finally {
      await transport.close();
      await dropPrefix(url(), prefix);
    }
  });

  it('Redis unreachable: service_unavailable with Retry-After, fast', async () => {
    const proxy = await startTcpProxy(url());
    const prefix = uniquePrefix('down');
    const transport = await BullTransport.create({ redis: proxy.url, redisPrefix: prefix, kinds: [ECHO_JOB] });
    try {
      proxy.cut();
      // Once the transport knows Redis is gone (its probe fails), a submit must not wait for it.
      await expect.poll(() => transport.isReady(), { timeout: 5_000, interval: 20 }).toBe(false);
      const started = Date.now();
      const error = await rejection(submit(transport, { value: 'x' }, 10_000));
      expect(error.code).toBe('service_unavailable');
      expect(error.headers['Retry-After']).toBe('5');
      expect(Date.now() - started).toBeLessThan(2_500);
      await expect(transport.isReady()).resolves.toBe(false);
    } finally {
      proxy.restore();
      await transport.close();
      await proxy.close();
      await dropPrefix(url(), prefix);
    }
  });

  it("a crashed worker's job is retried by another worker through stalled-job handling", async () => {
    const prefix = uniquePrefix('crash');
    const transport = await BullTransport.create({ redis: url(), redisPrefix: prefix, kinds: [ECHO_JOB] });
    const script = fileURLToPath(new URL('./fixtures/crashing-worker.ts', import.meta.url));
    const child = spawnNode(script, { args: [url(), prefix] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let survivor: Worker | undefined;
    try {
      await expect.poll(() => output.includes('ready'), { timeout: 10_000 }).toBe(true);
      const answer = submit(transport, { value: 'survives' }, 20_000);
      await expect.poll(() => output.includes('took-job'), { timeout: 10_000 }).toBe(true);
      await stopProcessTree(child, { signal: 'SIGKILL' });
      survivor = startBullWorker(echoHandler, { redis: url(), redisPrefix: prefix, concurrency: 1, takeoverMs: 2_000 });
      await expect(answer).resolves.toEqual({ value: 'SURVIVES' });
    } finally {
      await stopProcessTree(child, { signal: 'SIGKILL' });
      await survivor?.close();
      await transport.close();
      await dropPrefix(url(), prefix);
    }
  });
});
