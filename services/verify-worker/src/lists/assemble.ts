/**
 * A verify-worker's list work assembled from configuration: the engine at list priority (sharing
 * session slots with the batch route, batches first), the store, queue and meter of the backend
 * (`worker-parts.ts`), which also takes the list jobs off its queue.
 */
import type { Config } from '@svc/config';
import type { Redis } from '@svc/jobs/redis';
import type { ListQueue, ListStore } from '@svc/lists';
import { ListProcessor } from '@svc/lists/processor';
import type { CallbackDispatcher } from '@svc/webhooks';
import type { Meter } from '@svc/metering';
import type { Logger } from '@svc/telemetry';
import type { Feedback } from '@svc/feedback';
import type { Registry } from 'prom-client';
import type { SessionLimiter } from '../engine/host-limiter.ts';
import type { ProbeTuning } from '../engine/mail-server-probe.ts';
import { createVerifier } from '../handler.ts';
import type { Verifier } from '../engine/verifier.ts';

/** How often a list processor looks for expired lists and stalled work. */
export const JANITOR_INTERVAL_MS = 30_000;

export interface ListWorkParts {
  config: Config;
  store: ListStore;
  queue: ListQueue;
  meter: Meter;
  /** The list view of the session limiter shared with the batch route. */
  limiter: SessionLimiter;
  dispatcher?: CallbackDispatcher;
  registry?: Registry;
  redis?: Redis;
  logger?: Logger;
  /** The prober's retry and slow-reply tuning (test rigs shorten it). */
  tuning?: Partial<ProbeTuning>;
  feedback?: Feedback;
}

/** A list processor with a verifier of its own, made from the parts' options (tests; a process shares its parts: `listProcessorOn`). */
export function createListProcessor(parts: ListWorkParts): ListProcessor {
  const verifier = createVerifier({
    config: parts.config,
    ...(parts.registry === undefined ? {} : { registry: parts.registry }),
    ...(parts.redis === undefined ? {} : { redis: parts.redis }),
    ...(parts.logger === undefined ? {} : { logger: parts.logger }),
    limiter: parts.limiter,
    priority: 'list',
    ...(parts.tuning === undefined ? {} : { tuning: parts.tuning }),
    ...(parts.feedback === undefined ? {} : { feedback: parts.feedback }),
  });
  return listProcessorOn(verifier, parts);
}

/** The list processor on a verifier at list priority. */
export function listProcessorOn(
  verifier: Verifier,
  parts: Pick<ListWorkParts, 'config' | 'store' | 'queue' | 'meter' | 'dispatcher' | 'logger'>,
): ListProcessor {
  const { config } = parts;
  return new ListProcessor({
    store: parts.store,
    queue: parts.queue,
    meter: parts.meter,
    // The processor's gate (`beforeSession`) rides with each call down to the session slots.
    verify: (emails, options) => verifier.verifyDetailed(emails, options),
    ...(parts.dispatcher === undefined ? {} : { dispatcher: parts.dispatcher }),
    retryDelaysS: config.LIST_RETRY_DELAYS_S,
    retentionMs: config.LIST_RETENTION_DAYS * 86_400_000,
    chunkDeadlineMs: config.VERIFY_BATCH_DEADLINE_MS,
    ...(parts.logger === undefined ? {} : { logger: parts.logger }),
  });
}
