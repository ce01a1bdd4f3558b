/**
 * The verify job handler, assembled from configuration: resolver, SSRF guard, per-host limiter,
 * outcome cache (Redis in distributed mode, memory in embedded mode) and metrics.
 */
import type { Config } from '@svc/config';
import { VERIFY_JOB, toJobEntry } from '@svc/contracts';
import { registerHandler, type RegisteredHandler } from '@svc/jobs';
import type { Redis } from '@svc/jobs/redis';
import type { Registry } from 'prom-client';
import { cachedOutcomeSchema, type CachedOutcome } from './cache/cached-outcome.ts';
import { MemoryTtlCache, RedisTtlCache, type TtlCache } from './cache/ttl-cache.ts';
import { DnsResolver } from './dns/resolver.ts';
import { HostLimiter, type SessionLimiter } from './engine/host-limiter.ts';
import type { ProbeTuning } from './engine/mail-server-probe.ts';
import { Verifier } from './engine/verifier.ts';
import { createVerifyMetrics } from './metrics.ts';
import { filterProbeTargets } from './net/private-address.ts';

export interface VerifyHandlerOptions {
  config: Config;
  registry?: Registry;
  /** Shared cache in distributed mode. */
  redis?: Redis;
  /** Retry and slow-reply tuning of the prober (tests shorten it; the defaults suit real servers). */
  tuning?: Partial<ProbeTuning>;
  /** Session slots per mail server shared with other work (lists); default: this verifier's own. */
  limiter?: SessionLimiter;
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

export function createVerifier(options: VerifyHandlerOptions): Verifier {
  const { config } = options;
  const metrics = options.registry === undefined ? undefined : metricsOf(options.registry);
  const resolver = new DnsResolver({
    servers: config.VERIFY_DNS_SERVERS,
    timeoutMs: config.VERIFY_CONNECT_TIMEOUT_MS,
    mxCacheSeconds: Math.min(config.VERIFY_DOMAIN_CACHE_TTL_S, 3_600),
    onLookup: (type, result) => metrics?.dnsLookups.inc({ type, result }),
  });
  // Keys are hashes of addresses and values hold none (cached-outcome.ts); `v2` leaves older entries unread.
  const store: TtlCache<CachedOutcome> =
    options.redis === undefined
      ? new MemoryTtlCache<CachedOutcome>()
      : new RedisTtlCache(options.redis, `${config.REDIS_PREFIX}:verify:outcome:v2`, cachedOutcomeSchema);
  const ttl = config.VERIFY_RESULT_CACHE_TTL_S;
  return new Verifier({
    lookupMailHosts: (domain) => resolver.lookupMailHosts(domain),
    batchDeadlineMs: config.VERIFY_BATCH_DEADLINE_MS,
    controlSeed: config.mailFrom,
    cache: ttl > 0 ? { get: (key) => store.get(key), set: (key, value) => store.set(key, value, ttl) } : undefined,
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
        ...(config.VERIFY_SOCKS_PROXY === undefined ? {} : { socksProxy: config.VERIFY_SOCKS_PROXY }),
      },
      ...(options.tuning === undefined ? {} : { tuning: options.tuning }),
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
  return registerHandler(VERIFY_JOB, async ({ emails }, context) => ({
    results: (await verifier.verify(emails, { deadlineAt: context.deadlineAt, signal: context.signal })).map(toJobEntry),
  }));
}
