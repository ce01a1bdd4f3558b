/**
 * What a verify-worker process can see of the internet: its resolver (and that resolver's
 * cache), whether the resolver tells the truth, whether port 25 can be reached, and the egress
 * pool. One per process, shared by the batch and the list verifiers, so the canaries are checked
 * once however many verifiers there are.
 */
import net from 'node:net';
import type { Config } from '@svc/config';
import type { Logger } from '@svc/telemetry';
import { DnsResolver } from '../dns/resolver.ts';
import { EgressPool, type Egress } from '../engine/egress-pool.ts';
import type { VerifierHealth } from '../engine/verifier.ts';
import { openConnection } from '../smtp/connect.ts';
import { closedMessage, egressCheck, NO_EGRESS_REPORT, type EgressReport, type EgressTarget } from './egress-health.ts';
import { HealthMonitor, type HealthVerdict } from './monitor.ts';
import { NO_CANARY_ANSWER, resolverCheck, untrustedMessage, type ResolverCanaries } from './resolver-health.ts';

/** Where each verdict goes besides the verifier: gauges, and the one log line of each change. */
export interface SightListener {
  resolver?: (verdict: HealthVerdict<ResolverCanaries>) => void;
  egress?: (verdict: HealthVerdict<EgressReport>, pool: EgressPool) => void;
  lookup?: (type: 'MX' | 'A', result: 'hit' | 'miss' | 'error') => void;
}

export interface Sight {
  dns: DnsResolver;
  pool: EgressPool;
  health: VerifierHealth;
  resolverMonitor: HealthMonitor<ResolverCanaries>;
  egressMonitor: HealthMonitor<EgressReport>;
  /** Listeners by owner (a set of metrics): one each, however many verifiers share the sight. */
  listeners: Map<object, SightListener>;
  logger: Logger | undefined;
  /** Ends the periodic checks. */
  stop(): void;
}

/** `host` or `host:port` (IPv6 in brackets), the port defaulting to the SMTP port. */
export function parseSmtpCanary(value: string, defaultPort: number): EgressTarget {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed !== null) return { host: bracketed[1] ?? '', port: Number(bracketed[2] ?? defaultPort) };
  const [host = '', port] = value.split(':');
  return { host, port: port === undefined ? defaultPort : Number(port) };
}

/**
 * A sight for this configuration, its monitors started. A process makes one and hands it to each
 * of its verifiers (`worker-parts.ts`); `stop` ends its checks.
 */
export function startSight(config: Config, logger?: Logger, now?: () => number): Sight {
  const sight = createSight(config, logger, now);
  sight.resolverMonitor.start();
  sight.egressMonitor.start();
  return sight;
}

function createSight(config: Config, logger: Logger | undefined, now: (() => number) | undefined): Sight {
  const listeners = new Map<object, SightListener>();
  const log = (): Logger | undefined => sight.logger;
  const dns: DnsResolver = new DnsResolver({
    servers: config.VERIFY_DNS_SERVERS,
    timeoutMs: config.VERIFY_CONNECT_TIMEOUT_MS,
    mxCacheSeconds: Math.min(config.VERIFY_DOMAIN_CACHE_TTL_S, 86_400),
    // Nothing is kept while the canaries do not resolve; what was kept before the first check
    // said so is dropped when it does (onVerdict below).
    cachingAllowed: (): boolean => resolverMonitor.current?.healthy !== false,
    onLookup: (type, result) => listeners.forEach((listener) => listener.lookup?.(type, result)),
    ...(now === undefined ? {} : { now }),
  });
  const canaries = config.VERIFY_DNS_CANARIES;
  const resolverMonitor: HealthMonitor<ResolverCanaries> = new HealthMonitor<ResolverCanaries>({
    check: resolverCheck(canaries, (domain) => dns.probeMx(domain)),
    failedDetail: NO_CANARY_ANSWER,
    onVerdict: (verdict, changed) => {
      // What was learnt just before the resolver was found lying may be lies: forget it all.
      if (!verdict.healthy) dns.clear();
      listeners.forEach((listener) => listener.resolver?.(verdict));
      if (!changed) return;
      if (verdict.healthy) log()?.info({ canaries: verdict.detail.resolved }, 'DNS resolver trusted again: its canaries resolve');
      else log()?.error({ canaries, failed: verdict.detail.failed }, untrustedMessage(canaries, verdict.detail));
    },
  });
  const pool: EgressPool = new EgressPool(config.VERIFY_SOCKS_PROXY, {
    isOpen: (egress): boolean => egressMonitor.current?.detail.closed.includes(egress.label) !== true,
  });
  const egressMonitor: HealthMonitor<EgressReport> = new HealthMonitor<EgressReport>({
    check: egressCheck<Egress>({
      targets: () => smtpCanaries(config, dns, resolverMonitor),
      egresses: pool.egresses,
      label: (egress) => egress.label,
      connect: (target, egress) => reaches(target, egress, config.VERIFY_CONNECT_TIMEOUT_MS),
    }),
    failedDetail: NO_EGRESS_REPORT,
    onVerdict: (verdict, changed) => {
      listeners.forEach((listener) => listener.egress?.(verdict, pool));
      if (!changed) return;
      if (verdict.healthy) log()?.info({ egress: verdict.detail.open }, 'SMTP egress open again: a canary mail server accepts connections');
      else log()?.error({ egress: verdict.detail.closed, canaries: verdict.detail.targets }, closedMessage(verdict.detail));
    },
  });
  const health: VerifierHealth = {
    resolverTrustedSince: async (since) => (await resolverMonitor.fresh(since)).healthy,
    resolverTrusted: async () => (await resolverMonitor.verdict()).healthy,
    egressOpen: async () => (await egressMonitor.verdict()).healthy,
    egressOpenSince: async (since) => (await egressMonitor.fresh(since)).healthy,
    latest: () => ({
      resolverTrusted: resolverMonitor.current?.healthy === true,
      egressOpen: egressMonitor.current?.healthy !== false,
    }),
  };
  const stop = (): void => {
    resolverMonitor.stop();
    egressMonitor.stop();
  };
  const sight: Sight = { dns, pool, health, resolverMonitor, egressMonitor, listeners, logger, stop };
  return sight;
}

/** VERIFY_SMTP_CANARIES, else the MX hosts the DNS canaries resolved to, as addresses (the first of each host). */
async function smtpCanaries(config: Config, dns: DnsResolver, resolver: HealthMonitor<ResolverCanaries>): Promise<EgressTarget[]> {
  const named =
    config.VERIFY_SMTP_CANARIES?.map((value) => parseSmtpCanary(value, config.VERIFY_SMTP_PORT)) ??
    (await resolver.verdict()).detail.mxHosts.map((host) => ({ host, port: config.VERIFY_SMTP_PORT }));
  const resolved = await Promise.all(
    named.map(async (target) => {
      if (net.isIP(target.host) !== 0) return [target];
      const answer = await dns.lookupAddresses(target.host);
      return answer.kind === 'ok' ? answer.addresses.slice(0, 1).map((host) => ({ host, port: target.port })) : [];
    }),
  );
  return resolved.flat();
}

/** Whether a TCP connection (through the egress's proxy, if any) is accepted; closed at once. */
async function reaches(target: EgressTarget, egress: Egress, timeoutMs: number): Promise<boolean> {
  try {
    const socket = await openConnection({
      host: target.host,
      port: target.port,
      timeoutMs,
      ...(egress.proxy === undefined ? {} : { socksProxy: egress.proxy }),
    });
    socket.destroy();
    return true;
  } catch {
    return false;
  }
}
