/**
 * The verify job handler, assembled from configuration: resolver, SSRF guard, per-host limiter,
 * outcome cache (Redis in distributed mode, memory in embedded mode) and metrics.
 */
import type { Config } from '@svc/config';
import { VERIFY_JOB, toJobEntry } from '@svc/contracts';
import { registerHandler, type RegisteredHandler } from '@svc/jobs';
import type { Redis } from '@svc/jobs/redis';
import type { Registry } from 'prom-client';
import { decodeCachedOutcome, encodeCachedOutcome, type CachedOutcome } from './cache/cached-outcome.ts';
import { controlEvidenceSchema, type ControlEvidence } from './engine/control-evidence.ts';
import { jsonCodec, ttlCacheIn, type StateStore, type TtlCache } from '@svc/backend';
import { HostLimiter, type SessionLimiter } from './engine/host-limiter.ts';
import type { ProbeTuning } from './engine/mail-server-probe.ts';
import { Verifier } from './engine/verifier.ts';
import type { Logger } from '@svc/telemetry';
import { memoryFeedback, type Feedback } from '@svc/feedback';
import { redisFeedback } from '@svc/feedback/redis';
import { startSight, type Sight } from './health/sight.ts';
import { createVerifyMetrics } from './metrics.ts';
import { filterProbeTargets } from './net/private-address.ts';
import { politenessState, type PolitenessState } from './politeness/assemble.ts';
import { SessionGate, type WorkPriority } from './politeness/session-gate.ts';

export interface VerifyHandlerOptions {
  config: Config;
  registry?: Registry;
  /** Shared cache in distributed mode. */
  redis?: Redis;
  /** Retry and slow-reply tuning of the prober (tests shorten it; the defaults suit real servers). */
  tuning?: Partial<ProbeTuning>;
  /** Session slots per mail server shared with other work (lists); default: this verifier's own. */
  limiter?: SessionLimiter;
  /** Where the one line of each change of resolver trust or egress openness goes. */
  logger?: Logger;
  /** Whose work this verifier does: lists leave part of each provider budget to batches. Default `batch`. */
  priority?: WorkPriority;
  /** Learning from sends; absent: the Redis store with `redis`, embedded mode's memory store, else none. */
  feedback?: Feedback;
  /** The process's shared parts (sight, metrics, politeness) when several verifiers share them; default: this verifier's own. */
  process?: VerifyProcess;
  /** The clock its own DNS answers and memory caches age by (a test moves it past a TTL instead of waiting it out); default `Date.now`. */
  now?: () => number;
}

type VerifyMetrics = ReturnType<typeof createVerifyMetrics>;

/**
 * What every verifier of a process shares: one sight (its canaries checked once however many
 * verifiers there are), one set of metrics, the politeness state (back-offs and budgets). A
 * verify-worker starts one (`worker-parts.ts`) for its batch and its list verifier.
 */
export interface VerifyProcess {
  sight: Sight;
  registry: Registry | undefined;
  metrics: VerifyMetrics | undefined;
  polite: PolitenessState;
}

/** The parts of one verifier: its process's, the outcome and evidence caches, the feedback. */
export interface VerifyParts extends VerifyProcess {
  config: Config;
  outcomes: TtlCache<CachedOutcome>;
  evidence: TtlCache<ControlEvidence>;
  feedback: Feedback | undefined;
}

/** A process's shared verify parts; the sight's checks start now (`sight.stop()` ends them). */
export function startVerifyProcess(
  config: Config,
  options: { registry?: Registry; logger?: Logger; redis?: Redis; now?: () => number },
): VerifyProcess {
  const metrics = options.registry === undefined ? undefined : createVerifyMetrics(options.registry);
  const sight = startSight(config, options.logger, options.now);
  if (metrics !== undefined) observeSight(sight, metrics);
  return { sight, registry: options.registry, metrics, polite: politenessState(config, options.redis, options.registry) };
}

/** How one verifier uses the shared parts: its session slots, whose work it does, its prober tuning. */
export interface VerifierUse {
  limiter: SessionLimiter;
  priority: WorkPriority;
  tuning?: Partial<ProbeTuning> | undefined;
}

/** The outcome cache's name and form: keys are hashes of addresses and values hold none (cached-outcome.ts). */
export const OUTCOME_CACHE = { name: 'verify:outcome:v3', codec: { encode: encodeCachedOutcome, decode: decodeCachedOutcome } };
/** What a domain's control addresses showed, for the domain cache's time to live. */
export const EVIDENCE_CACHE = { name: 'verify:controls:v1', codec: jsonCodec(controlEvidenceSchema), memoryEntries: 10_000 };

/** The sight's verdicts and lookups in these metrics. */
export function observeSight(sight: Sight, metrics: VerifyMetrics): void {
  const setAside = (counts: Map<string, number>) => counts.forEach((count, egress) => metrics.egressSetAside.set({ egress }, count));
  sight.listeners.set(metrics, {
    lookup: (type, result) => metrics.dnsLookups.inc({ type, result }),
    resolver: (verdict) => metrics.resolverTrusted.set(verdict.healthy ? 1 : 0),
    egress: (verdict, pool) => {
      metrics.egressOpen.set(verdict.healthy ? 1 : 0);
      for (const egress of verdict.detail.open) metrics.egressReachable.set({ egress }, 1);
      for (const egress of verdict.detail.closed) metrics.egressReachable.set({ egress }, 0);
      setAside(pool.setAsideCounts());
    },
  });
  const { resolverMonitor, egressMonitor } = sight;
  if (resolverMonitor.current !== undefined) metrics.resolverTrusted.set(resolverMonitor.current.healthy ? 1 : 0);
  if (egressMonitor.current !== undefined) metrics.egressOpen.set(egressMonitor.current.healthy ? 1 : 0);
}

/**
 * The parts of a verifier alone, chosen from its options: caches and politeness in `redis` when
 * given, else in memory; its own sight, started here. A process's verifiers share theirs instead.
 */
function partsAlone(options: VerifyHandlerOptions): VerifyParts {
  const { config, redis } = options;
  const prefix = config.REDIS_PREFIX;
  const state: StateStore = redis === undefined ? { kind: 'memory' } : { kind: 'redis', redis, prefix };
  return {
    ...(options.process ??
      startVerifyProcess(config, {
        ...(options.registry === undefined ? {} : { registry: options.registry }),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
        ...(redis === undefined ? {} : { redis }),
        ...(options.now === undefined ? {} : { now: options.now }),
      })),
    config,
    outcomes: ttlCacheIn(state, OUTCOME_CACHE.name, OUTCOME_CACHE.codec, undefined, options.now),
    evidence: ttlCacheIn(state, EVIDENCE_CACHE.name, EVIDENCE_CACHE.codec, EVIDENCE_CACHE.memoryEntries, options.now),
    feedback:
      options.feedback ??
      (redis !== undefined ? redisFeedback(redis, prefix, config) : config.mode === 'embedded' ? memoryFeedback(config) : undefined),
  };
}

/** A verifier alone, its parts made from its options (tests and benches; a process shares its parts: `assembleVerifier`). */
export function createVerifier(options: VerifyHandlerOptions): Verifier {
  return assembleVerifier(partsAlone(options), {
    limiter: options.limiter ?? new HostLimiter(options.config.VERIFY_MAX_CONNECTIONS_PER_HOST),
    priority: options.priority ?? 'batch',
    tuning: options.tuning,
  });
}

/** A verifier on a process's shared parts. */
export function assembleVerifier(parts: VerifyParts, use: VerifierUse): Verifier {
  const { config, sight, metrics, polite, feedback } = parts;
  const resolver = sight.dns;
  const provider = (name: string | null) => name ?? 'other';
  const ttl = config.VERIFY_RESULT_CACHE_TTL_S;
  const domainTtl = config.VERIFY_DOMAIN_CACHE_TTL_S;
  const gate = new SessionGate(polite.backoff, polite.budgets, polite.events);
  return new Verifier({
    ...(feedback === undefined ? {} : { feedback }),
    lookupMailHosts: (domain) => resolver.lookupMailHosts(domain),
    dnsKeepSeconds: (domain) => resolver.keepSeconds(domain),
    health: sight.health,
    batchDeadlineMs: config.VERIFY_BATCH_DEADLINE_MS,
    controlSeed: config.mailFrom,
    ...(domainTtl > 0
      ? {
          evidence: {
            get: (domain: string) => parts.evidence.get(domain),
            set: (domain: string, value: ControlEvidence) => parts.evidence.set(domain, value, domainTtl),
          },
        }
      : {}),
    cache:
      ttl > 0
        ? {
            get: (key) => parts.outcomes.get(key),
            set: (key, value, seconds) => parts.outcomes.set(key, value, Math.min(ttl, seconds ?? ttl)),
          }
        : undefined,
    onResult: (result) => metrics?.verdicts.inc({ verdict: result.verdict, reason: result.reason }),
    probe: {
      filterTargets: (addresses) => {
        const { allowed, refused } = filterProbeTargets(addresses, config.VERIFY_ALLOW_PRIVATE_MX);
        if (refused.length > 0) metrics?.privateRefusals.inc(refused.length);
        return allowed;
      },
      limiter: use.limiter,
      session: {
        port: config.VERIFY_SMTP_PORT,
        heloName: config.heloName,
        mailFrom: config.mailFrom,
        connectTimeoutMs: config.VERIFY_CONNECT_TIMEOUT_MS,
        commandTimeoutMs: config.VERIFY_COMMAND_TIMEOUT_MS,
        idle: polite.idle,
      },
      egress: {
        pool: sight.pool,
        onSession: (egress, name) => metrics?.egressSessions.inc({ egress: egress.label, provider: provider(name) }),
        onBlock: (egress, name) => {
          metrics?.egressBlocks.inc({ egress: egress.label, provider: provider(name) });
          sight.pool.setAsideCounts().forEach((count, label) => metrics?.egressSetAside.set({ egress: label }, count));
        },
      },
      ...(use.tuning === undefined ? {} : { tuning: use.tuning }),
      politeness: { gate, priority: use.priority },
      trackOpen: (delta) => metrics?.smtpSessionsOpen.inc(delta),
      onReply: (code) => metrics?.smtpReplies.inc({ class: `${Math.floor(code / 100)}xx` }),
      observeSession: (result) =>
        metrics?.smtpSessions.inc({
          outcome: result === undefined ? 'aborted' : result.failure === undefined ? 'completed' : result.failure.kind,
        }),
    },
  });
}

export function createVerifyHandler(options: VerifyHandlerOptions): RegisteredHandler {
  return verifyJobHandler(createVerifier(options));
}

/** The `verify` job's handler on a verifier. */
export function verifyJobHandler(verifier: Verifier): RegisteredHandler {
  // The job's answer carries no address (it passes through Redis); the gateway adds the entries back.
  return registerHandler(VERIFY_JOB, async ({ emails, keyId }, context) => ({
    results: (
      await verifier.verify(emails, {
        deadlineAt: context.deadlineAt,
        signal: context.signal,
        ...(keyId === undefined ? {} : { keyId }),
        ...(context.progress === undefined ? {} : { onSettled: context.progress }),
      })
    ).map(toJobEntry),
  }));
}
