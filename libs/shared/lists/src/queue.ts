/**
 * The work of lists as jobs: a first pass per work chunk, a retry per chunk and round, and the
 * end of a list. Job ids are derived from what they do, so handing the same work over twice
 * (a janitor, a job run again after a crash) queues it once.
 *
 * Fairness: a chunk's priority is its position in its list, so the first chunks of every list
 * come before the second ones of any: lists share the workers round-robin instead of the first
 * big list holding them all. Due retries and ends go first.
 */
import { z } from 'zod';
import { exponentialRetry, nextRetryDelay, type RetryPolicy } from '@svc/jobs/retry';

export const listJobSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('chunk'), listId: z.string(), chunk: z.number().int().min(0) }),
  z.object({ kind: z.literal('retry'), listId: z.string(), chunk: z.number().int().min(0), round: z.number().int().min(1) }),
  z.object({ kind: z.literal('finish'), listId: z.string() }),
]);
export type ListJob = z.infer<typeof listJobSchema>;

export interface QueuedListJob {
  job: ListJob;
  /** Run no sooner than this many ms from now. */
  delayMs?: number;
}

export const LIST_QUEUE = 'verify-list';
/** BullMQ's highest priority value is 2^21; chunk positions beyond it share the last one. */
const MAX_PRIORITY = 2_097_152;

export function listJobId(job: ListJob): string {
  if (job.kind === 'chunk') return `${job.listId}-c${job.chunk}`;
  if (job.kind === 'retry') return `${job.listId}-r${job.chunk}-${job.round}`;
  return `${job.listId}-end`;
}

export function listJobPriority(job: ListJob): number {
  return job.kind === 'chunk' ? Math.min(job.chunk + 2, MAX_PRIORITY) : 1;
}

/** Chunk jobs of a new list: one per work chunk. */
export const chunkJobs = (listId: string, workChunks: number): QueuedListJob[] =>
  Array.from({ length: workChunks }, (_, chunk) => ({ job: { kind: 'chunk', listId, chunk } }));

/**
 * Retries of a list job that throws (Redis gone, a bug): 2 s, 4 s... 128 s, eight attempts in
 * about four minutes, in both queues. Temporary answers of mail servers are not failures: the
 * processor schedules their retries itself (LIST_RETRY_DELAYS_S).
 */
export const LIST_RETRY: RetryPolicy = exponentialRetry(8, 2_000);

export interface ListQueue {
  add(jobs: QueuedListJob[]): Promise<void>;
  close(): Promise<void>;
}

export type ListJobProcessor = (job: ListJob, signal: AbortSignal) => Promise<void>;

export interface MemoryListQueueOptions {
  concurrency: number;
  /** Retries of a job that throws before `onFailed`; default LIST_RETRY, as the BullMQ queue. */
  retry?: RetryPolicy;
}

interface Waiting {
  job: ListJob;
  priority: number;
  order: number;
  attempt: number;
}

/**
 * Embedded mode's list queue: the same priorities, delays and retries as the BullMQ queue,
 * in this process (lost on restart, as everything of embedded mode).
 */
export class MemoryListQueue implements ListQueue {
  private readonly waiting: Waiting[] = [];
  private readonly known = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private readonly shutdown = new AbortController();
  private processor: ListJobProcessor | undefined;
  private order = 0;
  private onFailed: ((job: ListJob, error: unknown) => unknown) | undefined;

  constructor(private readonly options: MemoryListQueueOptions) {}

  /** Starts running jobs (jobs added before wait for this); `onFailed` hears of jobs given up. */
  start(processor: ListJobProcessor, onFailed?: (job: ListJob, error: unknown) => unknown): void {
    this.processor = processor;
    this.onFailed = onFailed;
    this.pump();
  }

  add(jobs: QueuedListJob[]): Promise<void> {
    for (const { job, delayMs } of jobs) {
      const id = listJobId(job);
      if (this.known.has(id) || this.shutdown.signal.aborted) continue;
      this.known.add(id);
      this.later(() => this.enqueue(job, 1), delayMs ?? 0);
    }
    return Promise.resolve();
  }

  private later(action: () => void, delayMs: number): void {
    if (delayMs <= 0) return action();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, delayMs);
    this.timers.add(timer);
  }

  private enqueue(job: ListJob, attempt: number): void {
    this.waiting.push({ job, priority: listJobPriority(job), order: (this.order += 1), attempt });
    this.waiting.sort((a, b) => a.priority - b.priority || a.order - b.order);
    this.pump();
  }

  private pump(): void {
    const processor = this.processor;
    while (processor !== undefined && !this.shutdown.signal.aborted && this.running.size < this.options.concurrency) {
      const next = this.waiting.shift();
      if (next === undefined) return;
      const run = this.run(processor, next).finally(() => {
        this.running.delete(run);
        this.pump();
      });
      this.running.add(run);
    }
  }

  private async run(processor: ListJobProcessor, waiting: Waiting): Promise<void> {
    const id = listJobId(waiting.job);
    try {
      await processor(waiting.job, this.shutdown.signal);
      this.known.delete(id);
    } catch (error) {
      if (this.shutdown.signal.aborted) return;
      const delayMs = nextRetryDelay(this.options.retry ?? LIST_RETRY, waiting.attempt, error);
      if (delayMs === undefined) {
        this.known.delete(id);
        this.onFailed?.(waiting.job, error);
        return;
      }
      this.later(() => this.enqueue(waiting.job, waiting.attempt + 1), delayMs);
    }
  }

  /** Stops taking jobs, aborts the running ones and waits for them. */
  async close(): Promise<void> {
    this.shutdown.abort(new Error('list queue closing'));
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }
}
