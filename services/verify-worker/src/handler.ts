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
import { jsonCodec, MemoryTtlCache, RedisTtlCache, type TtlCache } from './cache/ttl-cache.ts';
import { HostLimiter, type SessionLimiter } from './engine/host-limiter.ts';
import type { ProbeTuning } from './engine/mail-server-probe.ts';
import { Verifier } from './engine/verifier.ts';
import type { Logger } from '@svc/telemetry';
import { memoryFeedback, type Feedback } from '@svc/feedback';
import { redisFeedback } from '@svc/feedback/redis';
import { sightFor, type Sight } from './health/sight.ts';
import { createVerifyMetrics } from './metrics.ts';
import { filterProbeTargets } from './net/private-address.ts';
import { politenessState } from './politeness/assemble.ts';
import { politenessEvents } from './politeness/metrics.ts';
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
}

/** One set of verify metrics per registry: the batch and the list verifier of a process share it. */
const metricsByRegistry = new WeakMap<Registry, ReturnType<typeof createVerifyMetrics>>();
function metricsOf(registry: Registry): ReturnType<typeof createVerifyMetrics> {
  let metrics = metricsByRegistry.get(registry);
  if (metrics === undefined) {
    metrics = createVerifyMetrics(registry);
    metricsByRegistry.set(registry, metrics);
  }
  return metrics;
}

/** The sight's verdicts and lookups in this registry's metrics, once per registry. */
function observe(sight: Sight, registry: Registry, metrics: ReturnType<typeof createVerifyMetrics>): void {
  if (sight.listeners.has(registry)) return;
  const setAside = (counts: Map<string, number>) => counts.forEach((count, egress) => metrics.egressSetAside.set({ egress }, count));
  sight.listeners.set(registry, {
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

export function createVerifier(options: VerifyHandlerOptions): Verifier {
  const { config } = options;
  const metrics = options.registry === undefined ? undefined : metricsOf(options.registry);
  const sight = sightFor(config, options.logger);
  if (options.registry !== undefined && metrics !== undefined) observe(sight, options.registry, metrics);
  const resolver = sight.dns;
  const provider = (name: string | null) => name ?? 'other';
  // Keys are hashes of addresses and values hold none (cached-outcome.ts); `v3` (compact values,
  // shorter keys) leaves older entries unread: they lapse with their time to live.
  const store: TtlCache<CachedOutcome> =
    options.redis === undefined
      ? new MemoryTtlCache<CachedOutcome>()
      : new RedisTtlCache(options.redis, `${config.REDIS_PREFIX}:verify:outcome:v3`, {
          encode: encodeCachedOutcome,
          decode: decodeCachedOutcome,
        });
  const ttl = config.VERIFY_RESULT_CACHE_TTL_S;
  const domainTtl = config.VERIFY_DOMAIN_CACHE_TTL_S;
  const evidence: TtlCache<ControlEvidence> =
    options.redis === undefined
      ? new MemoryTtlCache<ControlEvidence>(10_000)
      : new RedisTtlCache(options.redis, `${config.REDIS_PREFIX}:verify:controls:v1`, jsonCodec(controlEvidenceSchema));
  const polite = politenessState(config, options.redis, options.registry);
  const gate = new SessionGate(polite.backoff, polite.budgets, politenessEvents(options.registry));
  // Embedded mode shares the gateway's (one per configuration); a distributed worker reads Redis.
  const feedback =
    options.feedback ??
    (options.redis !== undefined
      ? redisFeedback(options.redis, config.REDIS_PREFIX, config)
      : config.mode === 'embedded'
        ? memoryFeedback(config)
        : undefined);
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
            get: (domain: string) => evidence.get(domain),
            set: (domain: string, value: ControlEvidence) => evidence.set(domain, value, domainTtl),
          },
        }
      : {}),
    cache:
      ttl > 0
        ? { get: (key) => store.get(key), set: (key, value, seconds) => store.set(key, value, Math.min(ttl, seconds ?? ttl)) }
        : undefined,
    onResult: (result) => metrics?.verdicts.inc({ verdict: result.verdict, reason: result.reason }),
    probe: {
      filterTargets: (addresses) => {
        const { allowed, refused } = filterProbeTargets(addresses, config.VERIFY_ALLOW_PRIVATE_MX);
        if (refused.length > 0) metrics?.privateRefusals.inc(refused.length);
        return allowed;
      },
      limiter: options.limiter ?? new HostLimiter(config.VERIFY_MAX_CONNECTIONS_PER_HOST),
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
      ...(options.tuning === undefined ? {} : { tuning: options.tuning }),
      politeness: { gate, priority: options.priority ?? 'batch' },
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
  const verifier = createVerifier(options);
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
