/**
 * Distributed mode's transport over BullMQ.
 *
 * BullMQ carries the jobs (queueing, locks, crash takeover, removal); the answers come back
 * through the gateway's own inbox (reply-channel.ts), named in each job, and are dispatched to
 * waiting requests through a map keyed by job id. Job ids are chosen before the add, so the waiter
 * exists before the job can possibly finish. The deadline travels inside the job: a wait timing
 * out does not cancel a running job, so workers drop jobs whose deadline has passed. A job leaves
 * Redis when it ends (its payload may hold addresses); one nobody waits for any more is removed
 * while still queued.
 */
import { randomUUID } from 'node:crypto';
import { UnrecoverableError, type Job, type Queue, type Worker } from 'bullmq';
import { errorKind, type Logger } from '@svc/telemetry';
import { closeConnections, openQueue, startWorker, type DurableQueue } from './durable-queue.ts';
import { queueConnection, queueErrorLog } from './queue-errors.ts';
import { waitForRedis, writeProblem, type Redis, type RedisTarget } from './redis.ts';
import { isBundle, JobSender, membersOf, type JobMember, type QueuedJobData, type SentJob } from './job-bundles.ts';
import { inboxKey, isInboxKey, ReplyInbox, sendProgress, sendReplies, type Reply } from './reply-channel.ts';
import type { ProgressMessage } from './progress-message.ts';
import { throttleProgress } from './progress-throttle.ts';
import { lockTimingFor } from './takeover.ts';
import {
  awaitJob,
  runHandler,
  type JobEnvelope,
  type JobKind,
  type JobTransport,
  type RegisteredHandler,
  type SubmitOptions,
} from './transport.ts';
import { CallerGoneError, unavailableError } from './transport-errors.ts';
import { JobCancellations, publishJobCancelled } from './job-cancellations.ts';
import { withTimeout } from './timeout.ts';
import { failureAnswer, failureError, JOB_PROTOCOL_VERSION as v } from './job-protocol.ts';

/** How long an enqueue may take before the request gives up with 503. */
const ENQUEUE_TIMEOUT_MS = 2_000;
/** How long the answer to a request past its deadline may wait to learn whether its job was taken. */
const WITHDRAW_TIMEOUT_MS = 1_000;
/** How long `create` waits for its connections. */
const CONNECT_TIMEOUT_MS = 10_000;
/** A readiness probe must answer within the orchestrator's timeout (1 s by default in Kubernetes). */
const READY_TIMEOUT_MS = 800;
const SENDER_TIMEOUTS = { addMs: ENQUEUE_TIMEOUT_MS, withdrawMs: WITHDRAW_TIMEOUT_MS };
/** A job crashing its worker (a poison job) is retried this often, then failed. */
const MAX_STALLED_COUNT = 2;

export type { Job, Worker };
// The durable-queue layer (bullPrefix, openQueue, startWorker, ...) and its retries.
export * from './durable-queue.ts';
export * from './queue-errors.ts';
export * from './retry.ts';
export { inboxKey, REPLY_TTL_MS } from './reply-channel.ts';

/** A queue this gateway submits to, and what sends its jobs (in bundles, for a bundled kind). */
interface Producer extends DurableQueue {
  sender: JobSender;
}

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface BullTransportOptions {
  redis: RedisTarget;
  redisPrefix: string;
  /** The kinds this gateway submits (their queue names, and whether their jobs may travel in bundles). */
  kinds: ReadonlyArray<Pick<JobKind<unknown, unknown>, 'name' | 'bundled'>>;
  /** Where Redis and queue errors go (rate-limited); the queue layer's own logger without. */
  logger?: Logger;
}

export class BullTransport implements JobTransport {
  readonly kind = 'bullmq' as const;
  private readonly waiters = new Map<string, Waiter>();
  /** The progress listeners of jobs whose caller follows them (SubmitOptions.onProgress), by answer id. */
  private readonly following = new Map<string, (done: number, total: number) => void>();
  private readonly inbox: ReplyInbox;
  private readonly redisPrefix: string;

  private constructor(
    private readonly client: Redis,
    inboxConnection: Redis,
    private readonly producers: Map<string, Producer>,
    gatewayId: string,
    options: BullTransportOptions,
  ) {
    this.redisPrefix = options.redisPrefix;
    const key = inboxKey(options.redisPrefix, gatewayId);
    this.inbox = new ReplyInbox(
      inboxConnection,
      key,
      (reply) => this.settle(reply),
      queueErrorLog(options.logger),
      (message) => this.progressed(message),
    );
  }

  /** Connects, and starts reading the gateway's inbox; resolves once both connections and every queue are up. */
  static async create(options: BullTransportOptions): Promise<BullTransport> {
    const { logger, redisPrefix } = options;
    const client = queueConnection(options.redis, 'request', 'gateway', logger);
    const inboxConnection = queueConnection(options.redis, 'blocking', 'gateway-replies', logger);
    // Ready means both connections are: the request client to enqueue (a first submit on a client
    // still connecting would be refused as unavailable), the inbox to hear answers.
    try {
      await Promise.all([waitForRedis(client, CONNECT_TIMEOUT_MS), waitForRedis(inboxConnection, CONNECT_TIMEOUT_MS)]);
    } catch (error) {
      await closeConnections([client, inboxConnection]);
      throw error;
    }
    // Queues are opened only now, on a ready connection, for the reason ReadyQueue gives
    // (durable-queue.ts): a queue opened in a Cluster's start-up gap refuses every job. Opened
    // here rather than at first use, so that a submit on the hot path awaits nothing more.
    const producers = new Map<string, Producer>();
    for (const kind of options.kinds) {
      // Each queue under its own hash tag (bullPrefix), opened by the durable-queue layer.
      const producer = openQueue(kind.name, { connection: client, redisPrefix, ...(logger === undefined ? {} : { logger }) });
      producers.set(kind.name, { ...producer, sender: new JobSender(producer.queue, kind.bundled === true, SENDER_TIMEOUTS) });
    }
    const transport = new BullTransport(client, inboxConnection, producers, randomUUID(), options);
    try {
      await withTimeout(Promise.all([...producers.values()].map((producer) => producer.queue.waitUntilReady())), CONNECT_TIMEOUT_MS);
    } catch (error) {
      await transport.close();
      throw error;
    }
    return transport;
  }

  /** The first answer of a job settles its wait; a second one (a job run twice) finds no waiter. */
  private settle(reply: Reply): void {
    const waiter = this.waiters.get(reply.jobId);
    if (waiter === undefined) return;
    this.waiters.delete(reply.jobId);
    if (reply.ok) waiter.resolve(reply.result);
    // A handler's ApiError as itself (v1); otherwise awaitJob makes it internal_error.
    else waiter.reject(failureError(reply));
  }

  /** A progress message of a job still waited for goes to its caller; one of a job answered, or of nobody's, is dropped. */
  private progressed(message: ProgressMessage): void {
    if (!this.waiters.has(message.jobId)) return;
    this.following.get(message.jobId)?.(message.progress.done, message.progress.total);
  }

  async submit<P, R>(kind: JobKind<P, R>, payload: P, options: SubmitOptions): Promise<R> {
    const producer = this.producers.get(kind.name);
    if (producer === undefined) throw new Error(`no queue for job kind ${kind.name}`);
    if (this.client.status !== 'ready') throw unavailableError();
    if (options.callerGone?.aborted === true) throw new CallerGoneError();
    // Not parsed here: the route or tool validated it; the worker parses what comes off Redis.
    const envelope: JobEnvelope<P> = {
      v,
      payload,
      deadlineAt: Date.now() + options.deadlineMs,
      requestId: options.requestId,
      replyTo: this.inbox.key,
      framedReplies: true,
      // Bundled kinds (quick QR renders) have no progress worth a message; their bundles drop the flag.
      ...(options.onProgress === undefined ? {} : { progress: true }),
    };
    // The id the answer comes back under: the job's own, or its place in a bundle (job-bundles.ts).
    const replyId = randomUUID();
    if (options.onProgress !== undefined) this.following.set(replyId, options.onProgress);
    const settled = new Promise<unknown>((resolve, reject) => this.waiters.set(replyId, { resolve, reject }));
    // Rejected by close() even while the job is still being sent: handled then by the send's failure.
    settled.catch(() => undefined);
    let sent: SentJob;
    try {
      // Bounded here too: a job gathered for a bundle also waits for the add before it.
      sent = await withTimeout(producer.sender.send(envelope, replyId), ENQUEUE_TIMEOUT_MS);
    } catch (error) {
      this.waiters.delete(replyId);
      this.following.delete(replyId);
      throw unavailableError(error);
    }
    const answer = settled.then((raw) => kind.result.parse(raw));
    try {
      return await awaitJob(answer, {
        deadlineAt: envelope.deadlineAt,
        requestId: options.requestId,
        kind: kind.name,
        callerGone: options.callerGone,
        // Nobody waits for the job any more: one still queued is removed, payload and all, and that
        // tells that no worker took it (a job a worker holds is locked: BullMQ leaves it, and it is
        // removed when it ends). The worker running one for a caller who left is told to stop it
        // (job-cancellations.ts); at the deadline its own deadline stops it already. Bounded, so
        // that a frozen Redis cannot hold the answer past its deadline.
        withdraw: async (callerLeft) => {
          if (!this.waiters.has(replyId)) return false;
          const untaken = await sent.withdraw();
          if (!untaken && callerLeft) void publishJobCancelled(this.client, this.redisPrefix, replyId).catch(() => undefined);
          return untaken;
        },
      });
    } finally {
      this.waiters.delete(replyId);
      this.following.delete(replyId);
      sent.leave();
    }
  }

  /** A write to the job backend would succeed now (the node is a primary; a cluster is ok). */
  async isReady(): Promise<boolean> {
    return (await writeProblem(this.client, READY_TIMEOUT_MS)) === undefined;
  }

  /** Where this gateway's answers arrive. */
  get inboxKey(): string {
    return this.inbox.key;
  }

  /** Number of requests waiting for a job result (for metrics and graceful shutdown). */
  get pending(): number {
    return this.waiters.size;
  }

  queues(): Queue[] {
    return [...this.producers.values()].map((producer) => producer.queue);
  }

  /** Bounded: a close never waits on a Redis that is gone (each step capped, then a hard disconnect). */
  async close(): Promise<void> {
    for (const waiter of this.waiters.values()) waiter.reject(unavailableError());
    this.waiters.clear();
    this.following.clear();
    await Promise.allSettled([this.inbox.close(), ...[...this.producers.values()].map((producer) => producer.close())]);
    await closeConnections([this.client]);
  }
}

export interface BullWorkerOptions {
  redis: RedisTarget;
  redisPrefix: string;
  concurrency: number;
  /**
   * How soon another worker takes over a job whose worker died; the lock and the stalled-job
   * check are sized from it. Default: the queue's own budget (see takeover.ts).
   */
  takeoverMs?: number;
  /** Job failures and stalls (warn, with job id, request id and queue) and Redis errors (rate-limited). */
  logger?: Logger;
  /** Called after each job with its outcome, for metrics. */
  onJobDone?: (queue: string, outcome: 'completed' | 'failed' | 'expired', seconds: number) => void;
}

/** Why a job is dropped unrun: nobody waits for its answer any more. */
function expiredReason(job: Pick<Job, 'attemptsStarted' | 'stalledCounter'>): string {
  return job.attemptsStarted > 1 || job.stalledCounter > 0
    ? 'deadline passed before another worker could take over the job from one that stopped'
    : 'deadline passed before a worker took the job';
}

/**
 * Starts a BullMQ worker for one kind. A crashed worker's jobs are taken over through BullMQ's
 * stalled-job check: its lock lapses (the worker renews it at half its duration while alive),
 * the next check moves the job back to wait, and any worker of the queue takes it. A job whose
 * deadline passed is dropped as unrecoverable, since nobody is waiting for it any more.
 *
 * Every way a job ends is answered to the inbox its gateway named: its result; the handler's
 * failure; the deadline passed; and a job that stalled more than MAX_STALLED_COUNT times, which
 * BullMQ fails in the next worker that fetches it without running the processor (its deferred
 * failure), announced by that worker's `failed` event with the job and so its inbox. The result
 * goes only to the inbox: what the processor returns is stored by BullMQ in the job and its event
 * stream, which nobody reads now. A job without an inbox (a gateway of an earlier release, which
 * listens to QueueEvents) keeps its result in the completed event.
 */
export function startBullWorker(handler: RegisteredHandler, options: BullWorkerOptions): Worker {
  const queue = handler.kind.name;
  const log = options.logger?.child({ queue });
  const errors = queueErrorLog(options.logger);
  const timing = lockTimingFor(queue, options.takeoverMs);
  // The worker's own connection (it rides out a Redis restart): an answer sent before the processor
  // returns reaches Redis before BullMQ's command that ends the job, without waiting for its reply.
  const connection = queueConnection(options.redis, 'blocking', `worker-${queue}`, options.logger);
  // Jobs long enough to be worth stopping when their caller leaves (job-cancellations.ts).
  const cancellations =
    handler.kind.bundled === true
      ? undefined
      : new JobCancellations(
          queueConnection(options.redis, 'blocking', `worker-${queue}-cancellations`, options.logger),
          options.redisPrefix,
        );
  const inboxOf = (job: Job<QueuedJobData>): string | undefined => {
    const { replyTo } = job.data;
    return replyTo !== undefined && isInboxKey(options.redisPrefix, replyTo) ? replyTo : undefined;
  };
  /** Sends answers to the job's inbox, if it names one; not awaited (see the connection above). */
  const answer = (job: Job<QueuedJobData>, replies: Reply[]): boolean => {
    const inbox = inboxOf(job);
    if (inbox === undefined || replies.length === 0) return false;
    void sendReplies(connection, inbox, replies, job.data.framedReplies === true).catch((failure: unknown) =>
      errors('error', `reply:${queue}:${errorKind(failure)}`, { queue, jobId: job.id, err: failure }, 'a job could not be answered'),
    );
    return true;
  };
  const failure = (member: JobMember, error: unknown): Reply => failureAnswer(member.replyId, error);
  /**
   * The job's progress, throttled, to its inbox, when its gateway asked for it (protocol v2); not
   * awaited, on the connection its answer takes later, so Redis holds each before the answer.
   */
  const progressOf = (job: Job<QueuedJobData>, member: JobMember) => {
    const inbox = inboxOf(job);
    if (member.envelope.progress !== true || inbox === undefined) return undefined;
    return throttleProgress(
      (done, total) =>
        void sendProgress(connection, inbox, { v, jobId: member.replyId, progress: { done, total } }).catch((failure: unknown) =>
          errors(
            'warn',
            `progress:${queue}:${errorKind(failure)}`,
            { queue, jobId: job.id, err: failure },
            'a progress message could not be sent',
          ),
        ),
    );
  };
  /** Runs one job of the BullMQ job: its answer, and the error when it failed. */
  const run = async (job: Job<QueuedJobData>, member: JobMember): Promise<{ reply: Reply; error?: unknown }> => {
    const started = performance.now();
    const context = { jobId: job.id, requestId: member.envelope.requestId, attempt: job.attemptsStarted };
    log?.debug(context, 'job started');
    const progress = progressOf(job, member);
    const watched = cancellations?.watch(member.replyId);
    try {
      const result = await runHandler(handler.kind, handler.handle, member.envelope, progress?.report, watched?.signal);
      options.onJobDone?.(queue, 'completed', (performance.now() - started) / 1_000);
      log?.debug(context, 'job done');
      return { reply: { v, jobId: member.replyId, ok: true, result } };
    } catch (error) {
      options.onJobDone?.(queue, 'failed', (performance.now() - started) / 1_000);
      if (watched?.signal.aborted === true) log?.info(context, 'job stopped: its caller left');
      return { reply: failure(member, error), error };
    } finally {
      progress?.stop();
      watched?.done();
    }
  };
  const worker = startWorker<QueuedJobData, unknown>(
    async (job: Job<QueuedJobData>) => {
      const members = membersOf(job);
      const now = Date.now();
      const live = members.filter((member) => member.envelope.deadlineAt > now);
      const allLive = live.length === members.length;
      // Made only when a job is dropped: an Error's stack trace costs microseconds on every job otherwise.
      const expiry = allLive ? undefined : new UnrecoverableError(expiredReason(job));
      const dropped = allLive ? [] : members.filter((member) => member.envelope.deadlineAt <= now).map((member) => failure(member, expiry));
      for (const _ of dropped) options.onJobDone?.(queue, 'expired', 0);
      if (expiry !== undefined && live.length === 0) {
        answer(job, dropped);
        throw expiry;
      }
      const outcomes = await Promise.all(live.map((member) => run(job, member)));
      // Answered before BullMQ ends the job (same connection, so Redis sees it first): a worker
      // dying in between leaves the job to be run again, and the gateway drops its second answers.
      const answered = answer(job, [...dropped, ...outcomes.map(({ reply }) => reply)]);
      if (!isBundle(job.data)) {
        // One job: its failure fails the BullMQ job (logged by the `failed` event below).
        const [{ reply, error }] = outcomes as [{ reply: Reply; error?: unknown }];
        if (!reply.ok) throw error;
        return answered ? null : reply.result;
      }
      // A bundle ends as done whatever its jobs did: each failure was answered to its own waiter.
      for (const [index, { reply, error }] of outcomes.entries())
        if (!reply.ok)
          log?.warn(
            { jobId: job.id, requestId: live[index]?.envelope.requestId, attempt: job.attemptsStarted, reason: errorMessage(error) },
            'job failed',
          );
      return null;
    },
    {
      queue,
      redis: options.redis,
      redisPrefix: options.redisPrefix,
      connection,
      concurrency: options.concurrency,
      lockDurationMs: timing.lockDurationMs,
      stalledIntervalMs: timing.stalledIntervalMs,
      maxStalledCount: MAX_STALLED_COUNT,
      // Whatever the job options say: nothing of a job stays in Redis once it ended.
      removeOnComplete: true,
      removeOnFail: true,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    },
  );
  worker.on('failed', (job, error) => {
    log?.warn({ jobId: job?.id, requestId: job?.data.requestId, attempt: job?.attemptsStarted, reason: error.message }, 'job failed');
    // Failed without the processor: it stalled too often (a poison job), and no processor answered it.
    if (job !== undefined && isDeferredFailure(job))
      answer(
        job,
        deferredMembers(job).map((member) => failure(member, error)),
      );
  });
  // Its worker stopped renewing the lock (crashed, or an event loop blocked for half a lock duration).
  worker.on('stalled', (jobId) => log?.warn({ jobId, movedTo: 'wait' }, 'job stalled'));
  worker.on('closed', () => {
    void closeConnections([connection]);
    void cancellations?.close();
  });
  return worker;
}

const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The jobs of a job failed without the processor; none when its data is no bundle's shape (nothing to answer). */
function deferredMembers(job: Job<QueuedJobData>): JobMember[] {
  try {
    return membersOf(job);
  } catch {
    return [];
  }
}

/** BullMQ's mark on a job that stalled more often than allowed (moveStalledJobsToWait sets it). */
const isDeferredFailure = (job: Pick<Job, 'deferredFailure'>): boolean =>
  typeof job.deferredFailure === 'string' && job.deferredFailure !== '';
