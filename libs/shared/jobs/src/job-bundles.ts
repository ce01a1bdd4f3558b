/**
 * Bundles: jobs of a quick kind (`JobKind.bundled`: QR renders, tens of microseconds of CPU) travel
 * several to one BullMQ job when they come faster than the gateway can add them one by one.
 *
 * Why: BullMQ's own work per job (the add script, the take-and-finish script, four or five stream
 * events, the job hash written and deleted) cost Redis and the worker several times what
 * rendering a QR code costs (`npm run bench:qr`, distributed mode: Redis and the qr-worker spent
 * about 290 us per request, for a 22 us render). A bundle pays that once for all its jobs.
 *
 * How: the gateway keeps at most one add per queue in flight. A job submitted while none is in
 * flight goes out at the end of the current turn of the event loop, with whatever else came in
 * that turn; jobs submitted while an add is in flight wait for it, then go out together (at most
 * MAX_BUNDLE to a job). An idle gateway adds each job alone, as before, with the same shape and
 * the job's id as its answer's id; a busy one adds fewer, larger jobs, so that the cost per job
 * falls as the load grows, and no job waits for a timer.
 *
 * Each job in a bundle keeps its own id (its answer's), deadline and request id: the worker
 * answers each on its own, drops each whose deadline passed, and the gateway waits for each as
 * for a job of its own. What is shared is the BullMQ job: its lock, its takeover when a worker
 * dies (the whole bundle runs again; the gateway drops the second answers), and its removal, which
 * a withdrawn job asks for only when no other job of the bundle still waits.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Job, Queue } from 'bullmq';
import type { JobEnvelope } from './transport.ts';
import { withTimeout } from './timeout.ts';

/** Most jobs one BullMQ job carries: a bundle of QR renders then runs for about a millisecond. */
export const MAX_BUNDLE = 32;

/** A job travelling in a bundle: what its own envelope would hold, and the id its answer carries. */
const bundledJobSchema = z.object({
  replyId: z.string(),
  payload: z.unknown(),
  deadlineAt: z.number(),
  requestId: z.string(),
});

/**
 * A bundle's BullMQ job data. `deadlineAt` is the latest of its jobs' (the bundle is dropped unrun
 * only once every job in it is past its deadline), `requestId` the first job's (for the queue's
 * own log lines), `replyTo` the inbox of the gateway that sent them all, `framedReplies` whether
 * it reads framed answers, `v` the protocol version it speaks (job-protocol.ts).
 */
const bundleSchema = z.object({
  v: z.number().int().optional(),
  bundle: z.array(bundledJobSchema).min(1),
  deadlineAt: z.number(),
  requestId: z.string(),
  replyTo: z.string().optional(),
  framedReplies: z.boolean().optional(),
});

type BundleData = z.infer<typeof bundleSchema>;

/** What a request job's BullMQ data holds: one job's envelope, or a bundle. */
export type QueuedJobData = JobEnvelope<unknown> | BundleData;

/** One job as a worker runs it: its envelope, and the id its answer goes back under. */
export interface JobMember {
  replyId: string;
  envelope: JobEnvelope<unknown>;
}

/**
 * The jobs a BullMQ job carries: itself (answered under its own id), or a bundle's. What Redis
 * holds is not trusted to be what a gateway sent: a bundle that breaks its shape throws.
 */
export function membersOf(job: Pick<Job<QueuedJobData>, 'id' | 'data'>): JobMember[] {
  const { data } = job;
  if (!isBundle(data)) {
    // BullMQ gives every job it hands a worker an id; one without could not be answered.
    if (job.id === undefined) throw new Error('a queue job without an id');
    return [{ replyId: job.id, envelope: data }];
  }
  const { bundle, replyTo } = bundleSchema.parse(data);
  return bundle.map(({ replyId, payload, deadlineAt, requestId }) => ({
    replyId,
    envelope: { payload, deadlineAt, requestId, ...(replyTo === undefined ? {} : { replyTo }) },
  }));
}

/** Whether a job's data is a bundle's (anything else is taken for one job's envelope, as before bundles). */
export const isBundle = (data: QueuedJobData): data is BundleData => typeof data === 'object' && data !== null && 'bundle' in data;

/** What a sent job's waiter can do with its BullMQ job once its wait ends. */
export interface SentJob {
  /**
   * Its wait ended without its answer: removes the BullMQ job if it is still queued and no other
   * job of its bundle waits; resolves whether no worker had taken it.
   */
  withdraw(): Promise<boolean>;
  /** Its wait ended (however): it no longer holds its bundle in the queue. */
  leave(): void;
}

interface Gathered {
  replyId: string;
  envelope: JobEnvelope<unknown>;
  sent: (job: SentJob) => void;
  failed: (error: unknown) => void;
}

/** BullMQ's states of a job that no worker holds yet. */
const QUEUED_STATES = new Set(['waiting', 'prioritized', 'delayed', 'waiting-children']);

const JOB_OPTIONS = { removeOnComplete: true, removeOnFail: true, attempts: 1 } as const;

/** How long an add, and a withdrawal, may wait for Redis. */
export interface SenderTimeouts {
  addMs: number;
  withdrawMs: number;
}

/** A gateway's sender of one queue's jobs, bundling them under load when `bundled`. */
export class JobSender {
  private gathered: Gathered[] = [];
  private adding = false;
  private scheduled = false;

  constructor(
    private readonly queue: Queue,
    private readonly bundled: boolean,
    private readonly timeouts: SenderTimeouts,
  ) {}

  /** Adds the job `envelope`, answered under `replyId`; resolves once it is in the queue. */
  send(envelope: JobEnvelope<unknown>, replyId: string): Promise<SentJob> {
    if (!this.bundled) return this.addOne(envelope, replyId);
    return new Promise<SentJob>((sent, failed) => {
      this.gathered.push({ replyId, envelope, sent, failed });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.adding || this.scheduled || this.gathered.length === 0) return;
    this.scheduled = true;
    // The end of this turn: the requests whose turn this is (all answered by one read of Redis,
    // say) are gathered by then.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const jobs = this.gathered.splice(0, MAX_BUNDLE);
    if (jobs.length === 0) return;
    this.adding = true;
    try {
      if (jobs.length === 1) {
        const [job] = jobs as [Gathered];
        await this.addOne(job.envelope, job.replyId).then(job.sent, job.failed);
      } else await this.addBundle(jobs);
    } finally {
      this.adding = false;
      this.schedule();
    }
  }

  private async addOne(envelope: JobEnvelope<unknown>, jobId: string): Promise<SentJob> {
    await withTimeout(this.queue.add(this.queue.name, envelope, { jobId, ...JOB_OPTIONS }), this.timeouts.addMs);
    return { withdraw: () => this.withdraw(jobId, true), leave: () => undefined };
  }

  /**
   * Whether the BullMQ job `jobId` is still queued, no worker holding it; if so and `remove`, it
   * is removed, payload and all. The state is asked first because BullMQ's remove also answers 1
   * for a job that is gone: one a worker ended and removed a moment before, which it had taken.
   * A worker that takes the job between the two steps finds its deadline passed (a wait ends at
   * its deadline, or its caller is gone and the answer unwanted) and drops it unrun.
   */
  private async withdraw(jobId: string, remove: boolean): Promise<boolean> {
    const state = await withTimeout(this.queue.getJobState(jobId), this.timeouts.withdrawMs);
    if (!QUEUED_STATES.has(state)) return false;
    if (remove) await withTimeout(this.queue.remove(jobId), this.timeouts.withdrawMs);
    return true;
  }

  private async addBundle(jobs: Gathered[]): Promise<void> {
    const [first] = jobs as [Gathered, ...Gathered[]];
    const data: BundleData = {
      ...(first.envelope.v === undefined ? {} : { v: first.envelope.v }),
      bundle: jobs.map(({ replyId, envelope }) => ({
        replyId,
        payload: envelope.payload,
        deadlineAt: envelope.deadlineAt,
        requestId: envelope.requestId,
      })),
      deadlineAt: Math.max(...jobs.map(({ envelope }) => envelope.deadlineAt)),
      requestId: first.envelope.requestId,
      ...(first.envelope.replyTo === undefined ? {} : { replyTo: first.envelope.replyTo }),
      ...(first.envelope.framedReplies === undefined ? {} : { framedReplies: first.envelope.framedReplies }),
    };
    const jobId = randomUUID();
    try {
      await withTimeout(this.queue.add(this.queue.name, data, { jobId, ...JOB_OPTIONS }), this.timeouts.addMs);
    } catch (error) {
      for (const job of jobs) job.failed(error);
      return;
    }
    let waiting = jobs.length;
    for (const job of jobs) {
      let left = false;
      const leave = () => {
        if (!left) waiting -= 1;
        left = true;
      };
      job.sent({
        leave,
        withdraw: () => {
          leave();
          // The last to leave takes the bundle out of the queue; before that, it only asks.
          return this.withdraw(jobId, waiting === 0);
        },
      });
    }
  }
}
