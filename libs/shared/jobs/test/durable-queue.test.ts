/**
 * The durable-queue layer against a real Redis: a job's final failure is told from a retry by
 * BullMQ's own state (attempts used up, unrecoverable, stalled too often), never by its message;
 * retries wait as the queue's policy says; `error` events reach the log once per kind and window;
 * a close never waits on a Redis that is gone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { UnrecoverableError, type Job, type Queue } from 'bullmq';
import { exponentialRetry, nextRetryDelay, openQueue, retryJobOptions, startWorker, type Worker } from '@svc/jobs/bullmq';
import { createLogger } from '@svc/telemetry';
import { dropPrefix, startTcpProxy, testRedisUrl, uniquePrefix, waitUntil } from '@svc/testkit';

const prefix = uniquePrefix('durable');
afterAll(() => dropPrefix(testRedisUrl(), prefix));

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', 'test', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { lines, logger };
}

const fastRetry = exponentialRetry(3, 20);

/** Whether `failed` jobs of the queue are failed and none is waiting, delayed or running (to be tried again or reported). */
async function atRest(queue: Queue, failed: number): Promise<boolean> {
  const counts = await queue.getJobCounts('failed', 'waiting', 'delayed', 'prioritized', 'active', 'waiting-children');
  return counts.failed === failed && Object.entries(counts).every(([state, count]) => state === 'failed' || count === 0);
}

describe('the durable-queue layer', () => {
  it('a retry policy: the wait before each next attempt, none after the last', () => {
    expect([1, 2, 3].map((made) => nextRetryDelay(exponentialRetry(3, 2_000), made, new Error('x')))).toEqual([2_000, 4_000, undefined]);
  });

  it('retries as the policy says and reports a final failure once, after the last attempt or at once when unrecoverable', async () => {
    const { logger } = capture();
    const producer = openQueue('flaky', { redis: testRedisUrl(), connectionName: 'test-producer', redisPrefix: prefix, logger });
    const attempts = new Map<string, number>();
    const final: Array<{ id: string | undefined; attemptsMade: number; reason: string }> = [];
    const worker: Worker = startWorker(
      (job: Job) => {
        attempts.set(String(job.id), (attempts.get(String(job.id)) ?? 0) + 1);
        // A message that names a stall must not make a retry look final (the old rule matched /stalled/).
        if (job.name === 'unrecoverable') throw new UnrecoverableError('no point');
        return Promise.reject(new Error('stalled on purpose'));
      },
      {
        queue: 'flaky',
        redis: testRedisUrl(),
        redisPrefix: prefix,
        concurrency: 2,
        lockDurationMs: 5_000,
        stalledIntervalMs: 5_000,
        maxStalledCount: 1,
        retry: fastRetry,
        logger,
        onFinalFailure: (job, error) => void final.push({ id: job.id, attemptsMade: job.attemptsMade, reason: error.message }),
      },
    );
    try {
      await producer.queue.add('retried', {}, { ...retryJobOptions(fastRetry), jobId: 'retried' });
      await producer.queue.add('unrecoverable', {}, { ...retryJobOptions(fastRetry), jobId: 'unrecoverable' });
      await waitUntil(() => final.length === 2, 10_000, 'both jobs to fail for good');
      // Both jobs at rest as failed, none waiting for another attempt: no later report can come.
      await waitUntil(() => atRest(producer.queue, 2), 5_000, 'both jobs to be failed, none to run again');
      expect(final).toHaveLength(2);
      expect(attempts.get('retried')).toBe(3);
      expect(attempts.get('unrecoverable')).toBe(1);
      expect(final.find((entry) => entry.id === 'retried')).toMatchObject({ attemptsMade: 3, reason: 'stalled on purpose' });
    } finally {
      await worker.close();
      await producer.close();
    }
  });

  it('a job that stalls more often than allowed is a final failure, told by its state (one report)', async () => {
    const { logger } = capture();
    const producer = openQueue('stalling', { redis: testRedisUrl(), connectionName: 'test-producer', redisPrefix: prefix, logger });
    const final: string[] = [];
    const options = {
      queue: 'stalling',
      redis: testRedisUrl(),
      redisPrefix: prefix,
      concurrency: 1,
      lockDurationMs: 500,
      stalledIntervalMs: 200,
      maxStalledCount: 0,
      retry: fastRetry,
      logger,
      onFinalFailure: (job: Job, error: Error) => void final.push(`${String(job.id)}: ${error.message}`),
    };
    let taken = false;
    // The first worker takes the job and stops renewing its lock without ending it (a crash).
    const crashing = startWorker(() => {
      taken = true;
      return new Promise<never>(() => undefined);
    }, options);
    await producer.queue.add('x', {}, { ...retryJobOptions(fastRetry), jobId: 'stalls' });
    await waitUntil(() => taken, 5_000, 'the first worker to take the job');
    await crashing.close(true);
    const survivor = startWorker(() => Promise.resolve('never run'), options);
    try {
      await waitUntil(() => final.length > 0, 10_000, 'the stalled job to fail for good');
      // The job at rest as failed, not active: no later stall check can find it and report it again.
      await waitUntil(() => atRest(producer.queue, 1), 5_000, 'the job to be failed, none to run again');
      expect(final).toEqual(['stalls: job stalled more than allowable limit']);
    } finally {
      await survivor.close();
      await producer.close();
    }
  });

  it('a final-failure handler that throws is logged, not lost', async () => {
    const { lines, logger } = capture();
    const producer = openQueue('recording', { redis: testRedisUrl(), connectionName: 'test-producer', redisPrefix: prefix, logger });
    const worker = startWorker(() => Promise.reject(new UnrecoverableError('bad job')), {
      queue: 'recording',
      redis: testRedisUrl(),
      redisPrefix: prefix,
      concurrency: 1,
      lockDurationMs: 5_000,
      stalledIntervalMs: 5_000,
      maxStalledCount: 1,
      logger,
      onFinalFailure: () => Promise.reject(new Error('store unreachable')),
    });
    try {
      await producer.queue.add('x', {});
      await waitUntil(() => lines.some((line) => line.msg === 'a failed job could not be recorded'), 5_000, 'the failure to be logged');
    } finally {
      await worker.close();
      await producer.close();
    }
  });

  it('error events reach the log once per kind and window, with the count of those left out', async () => {
    const { lines, logger } = capture();
    const producer = openQueue('noisy', { redis: testRedisUrl(), connectionName: 'test-producer', redisPrefix: prefix, logger });
    try {
      for (let i = 0; i < 100; i += 1) producer.queue.emit('error', new Error(`Missing lock for job ${i}`));
      const written = lines.filter((line) => line.msg === 'queue error');
      expect(written).toHaveLength(1);
      expect(written[0]).toMatchObject({ component: 'queue', queue: 'noisy', level: 50 });
    } finally {
      await producer.close();
    }
  });

  it('closes within its budget when Redis is gone', async () => {
    const proxy = await startTcpProxy(testRedisUrl());
    const { logger } = capture();
    const producer = openQueue('cut', { redis: proxy.url, connectionName: 'test-producer', redisPrefix: prefix, logger });
    try {
      await producer.queue.waitUntilReady();
      proxy.cut();
      const started = Date.now();
      await producer.close();
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await proxy.close();
    }
  });
});
