/**
 * A worker process's job metrics: jobs running now, time spent waiting in the queue, and the
 * queue's depth and the age of its oldest waiting job, read from Redis at scrape time (an idle
 * worker costs Redis nothing between scrapes).
 */
import type { Queue, Worker } from 'bullmq';
import type { WorkerMetrics } from '@svc/telemetry';

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed'] as const;

/** Counts the jobs `worker` runs; `queueWait` only for request jobs, whose enqueue time means a caller waiting. */
export function countJobs(worker: Worker, metrics: WorkerMetrics, options: { queueWait: boolean }): void {
  const queue = worker.name;
  worker.on('active', (job) => {
    metrics.activeJobs.inc({ queue });
    // Enqueued by the gateway's clock, started by this one: hosts are assumed NTP-synchronised.
    if (options.queueWait && job.processedOn !== undefined)
      metrics.queueWait.observe({ queue }, Math.max(0, job.processedOn - job.timestamp) / 1_000);
  });
  worker.on('completed', () => metrics.activeJobs.dec({ queue }));
  worker.on('failed', (job) => {
    if (job !== undefined) metrics.activeJobs.dec({ queue });
  });
}

/** Reads the depth of `queues` into the metrics; a queue Redis does not answer for keeps its last values. */
export async function collectQueueDepth(queues: readonly Queue[], metrics: WorkerMetrics): Promise<void> {
  await Promise.all(
    queues.map(async (queue) => {
      const counts = await queue.getJobCounts(...QUEUE_STATES).catch(() => undefined);
      if (counts === undefined) return;
      for (const state of QUEUE_STATES) metrics.queueJobs.set({ queue: queue.name, state }, counts[state] ?? 0);
      // Only the states the counts show jobs in are read (most scrapes find none waiting).
      const oldest = await oldestWaitingSince(queue, (counts.waiting ?? 0) > 0, (counts.prioritized ?? 0) > 0).catch(() => undefined);
      if (oldest !== undefined)
        metrics.oldestJobAge.set({ queue: queue.name }, oldest === null ? 0 : Math.max(0, Date.now() - oldest) / 1_000);
    }),
  );
}

/** Creation time (ms) of the job that has waited longest to start, or null when none waits. */
async function oldestWaitingSince(queue: Queue, anyWaiting: boolean, anyPrioritized: boolean): Promise<number | null> {
  // The wait list is FIFO (its tail is the oldest); prioritized jobs are ordered by priority,
  // so the one due next stands for them: reading the whole set at every scrape would cost too much.
  const [waiting, prioritized] = await Promise.all([
    anyWaiting ? queue.getJobs(['waiting'], 0, 0, true) : [],
    anyPrioritized ? queue.getJobs(['prioritized'], 0, 0, true) : [],
  ]);
  const stamps = [...waiting, ...prioritized].map((job) => job.timestamp);
  return stamps.length === 0 ? null : Math.min(...stamps);
}
