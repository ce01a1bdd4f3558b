/**
 * A verify-worker's work on a backend, in either mode: the batch handler and the list processor
 * on one set of shared parts (one sight, one set of metrics, the caches, the politeness state, the
 * feedback and the session slots per mail server, batches first). The roots (the distributed
 * main, embedded mode's scripts/embedded.ts) only hand these to their backend.
 */
import type { Backend } from '@svc/backend';
import type { RegisteredHandler } from '@svc/jobs';
import type { ListProcessor } from '@svc/lists/processor';
import { errorKind, type Logger } from '@svc/telemetry';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ProbeTuning } from './engine/mail-server-probe.ts';
import { LocalPriorityLimiter, RedisHostLimiter, type PrioritySessionLimiter } from './engine/shared-host-limiter.ts';
import { EVIDENCE_CACHE, OUTCOME_CACHE, assembleVerifier, startVerifyProcess, verifyJobHandler, type VerifyParts } from './handler.ts';
import { listProcessorOn } from './lists/assemble.ts';

export interface VerifyWork {
  /** The `verify` job's handler (batches). */
  handler: RegisteredHandler;
  /** The list processor (list jobs and the janitor). */
  lists: ListProcessor;
  /** A problem that makes the process not ready (the shared session counts out of reach), else undefined. */
  readiness: () => Promise<string | undefined>;
  /** Ends the sight's periodic checks. */
  close: () => void;
}

export interface VerifyWorkOptions {
  registry: Registry;
  logger: Logger;
  /** The prober's retry and slow-reply tuning (test rigs shorten it). */
  tuning?: Partial<ProbeTuning>;
}

export function createVerifyWork(backend: Backend, options: VerifyWorkOptions): VerifyWork {
  const { config } = backend;
  const { registry, logger } = options;
  const state = backend.state;
  const shared = startVerifyProcess(config, { registry, logger, ...(state.kind === 'redis' ? { redis: state.redis } : {}) });
  const parts: VerifyParts = {
    ...shared,
    config,
    outcomes: backend.cache(OUTCOME_CACHE.name, OUTCOME_CACHE.codec),
    evidence: backend.cache(EVIDENCE_CACHE.name, EVIDENCE_CACHE.codec, EVIDENCE_CACHE.memoryEntries),
    feedback: backend.feedback,
  };
  const { limiter, reachable, settle } = sessionLimiter(backend, registry, logger);
  // Parked SMTP connections hold session slots (shared in Redis): QUIT them and wait for the slots'
  // release before the store connection closes, else a stopped worker's slots stay taken until
  // their leases lapse (15 s).
  backend.onClose(async () => {
    await shared.polite.idle.close();
    await settle();
  });
  const tuning = options.tuning;
  const batch = assembleVerifier(parts, { limiter: limiter.for('batch'), priority: 'batch', tuning });
  const list = assembleVerifier(parts, { limiter: limiter.for('list'), priority: 'list', tuning });
  return {
    handler: verifyJobHandler(batch),
    lists: listProcessorOn(list, {
      config,
      store: backend.lists.store,
      queue: backend.lists.queue,
      meter: backend.meter,
      dispatcher: backend.dispatcher,
      logger,
    }),
    readiness: () => Promise.resolve(reachable() ? undefined : 'SMTP session limits in Redis are unreachable: sessions wait for them.'),
    close: () => shared.sight.stop(),
  };
}

/**
 * Sessions per mail server: counted in this process, or across every worker of the deployment
 * in Redis; batches first either way.
 */
function sessionLimiter(
  backend: Backend,
  registry: Registry,
  logger: Logger,
): { limiter: PrioritySessionLimiter; reachable: () => boolean; settle: () => Promise<void> } {
  const { config, state } = backend;
  if (state.kind === 'memory')
    return {
      limiter: new LocalPriorityLimiter(config.VERIFY_MAX_CONNECTIONS_PER_HOST),
      reachable: () => true,
      settle: () => Promise.resolve(),
    };
  const unavailable = new Counter({
    name: 'verify_session_limiter_unavailable_total',
    help: 'Attempts to take an SMTP session slot that could not reach the shared counts in Redis',
    registers: [registry],
  });
  const limiter = new RedisHostLimiter({
    redis: state.redis,
    prefix: state.prefix,
    perHost: config.VERIFY_MAX_CONNECTIONS_PER_HOST,
    // Loud, not a quiet fallback: sessions wait for the shared counts rather than multiply the limit.
    // Through the process's error log: while Redis is out every waiting session reports, once per kind per window.
    onUnavailable: (error) => {
      unavailable.inc();
      logger.errorLog(
        'error',
        `smtp-session-limiter:${errorKind(error)}`,
        { component: 'smtp-session-limiter', err: error },
        'SMTP session limits unreachable in Redis: sessions wait',
      );
    },
  });
  new Gauge({
    name: 'verify_session_limiter_available',
    help: '1 while the shared per-mail-server session counts in Redis answer, 0 while sessions wait for them',
    registers: [registry],
    collect() {
      this.set(limiter.available ? 1 : 0);
    },
  });
  // Shutdown waits for the slot releases still in flight.
  return { limiter, reachable: () => limiter.available, settle: () => limiter.close() };
}
