/**
 * The seam between the modes. Everything above it (the gateway app, the worker handlers, the list
 * processor) is the same code in both; a process composes one backend with the roles it runs:
 *
 * - embedded (`npm start` without a Redis variable): one process, state in its memory, jobs and
 *   list work run in process, callbacks delivered from here;
 * - distributed (REDIS_URL, a Cluster or Sentinel): state in Redis, jobs and list work over BullMQ.
 *
 * The parts a service owns (the gateway's key store and rate-limit counts, the verify-worker's
 * session limiter and politeness) are made by that service from `state`, in one module of its own.
 */
import type { Config } from '@svc/config';
import type { Feedback } from '@svc/feedback';
import type { JobTransport, RegisteredHandler } from '@svc/jobs';
import type { Redis } from '@svc/jobs/redis';
import type { WorkerProcessOptions } from '@svc/jobs/worker';
import type { ListQueue, ListStore } from '@svc/lists';
import type { ListProcessor } from '@svc/lists/processor';
import type { Meter } from '@svc/metering';
import type { Logger } from '@svc/telemetry';
import type { CallbackDispatcher } from '@svc/webhooks';
import type { TtlCache, ValueCodec } from './ttl-cache.ts';

/** The processes a backend is made for: each opens only what it uses (a qr-worker opens no store). */
export type BackendProcess = 'embedded' | 'gateway' | 'verify-worker' | 'qr-worker';

/** Where the state of a service's own parts is kept: this process, or the deployment's Redis. */
export type StateStore =
  | { kind: 'memory' }
  | {
      kind: 'redis';
      /** The process's store connection (opened at first use, closed by the backend). */
      redis: Redis;
      prefix: string;
    };

/** How a worker process serves its handlers (distributed: BullMQ workers, /healthz, /readyz, /metrics). */
export type ServeOptions = Omit<WorkerProcessOptions, 'config' | 'handlers' | 'extraWorkers'>;

export interface ListWorkOptions {
  /** How often the processor looks for expired lists and stalled work. */
  janitorIntervalMs: number;
  /** How long a taken list job is held before another worker may take it (distributed). */
  lockDurationMs?: number;
}

export interface Backend {
  readonly mode: 'embedded' | 'distributed';
  readonly config: Config;
  /** The store of the parts a service makes for itself. */
  readonly state: StateStore;
  readonly meter: Meter;
  /** Learning from sends: the gateway's doors write it, the verifier reads it. */
  readonly feedback: Feedback;
  readonly lists: { store: ListStore; queue: ListQueue };
  /** Where a list's end is handed for its signed callback. */
  readonly dispatcher: CallbackDispatcher;
  /** A cache of values with a time to live under `name` (memory: at most `memoryEntries`). */
  cache: <T>(name: string, codec: ValueCodec<T>, memoryEntries?: number) => TtlCache<T>;
  /**
   * The gateway's side of jobs. Embedded: the handlers `serve` was given, run in this process
   * (so serve them first); distributed: BullMQ queues for every job kind.
   */
  transport: () => Promise<JobTransport>;
  /** A worker's side of jobs: run these handlers (embedded: behind `transport()`; distributed: a worker process with its probes). */
  serve: (handlers: RegisteredHandler[], options?: ServeOptions) => Promise<void>;
  /** Take list jobs off the queue with this processor, its janitor beside it (before `serve`: a worker process counts the list worker as its own). */
  workLists: (processor: ListProcessor, options: ListWorkOptions) => void;
  /** Deliver the callbacks the dispatcher was handed (distributed; embedded's dispatcher delivers by itself). */
  deliverCallbacks: () => void;
  /**
   * A part made on `state` that must end after the work stopped and before the store connection
   * closes (the verify-worker's parked SMTP connections give their shared session slots back).
   */
  onClose: (cleanup: () => Promise<void>) => void;
  /** Stops what was started and closes what was opened, in order; the `onClose` cleanups, then the store connection last. */
  close: () => Promise<void>;
}

export interface BackendOptions {
  process: BackendProcess;
  logger: Logger;
  /** Another dispatcher than the mode's (tests record callbacks). */
  dispatcher?: CallbackDispatcher;
}

/** Embedded mode also says which webhook secret it signs with (made at start-up when none is configured). */
export interface EmbeddedBackend extends Backend {
  readonly mode: 'embedded';
  /** Signs every key's list callbacks: LIST_WEBHOOK_SECRET, or one made at start-up. */
  readonly webhookSecret: string;
  /** The secret made at start-up because LIST_WEBHOOK_SECRET is unset (printed once), else undefined. */
  readonly generatedWebhookSecret: string | undefined;
}
