/**
 * The verifier's metrics. Labels are bounded: verdicts, reasons, reply classes, egresses (the
 * configured proxies), providers (the provider table's names, `other` for the rest), never an
 * address or a domain.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export function createVerifyMetrics(registry: Registry) {
  return {
    verdicts: new Counter({
      name: 'verify_verdicts_total',
      help: 'Results by verdict and reason',
      labelNames: ['verdict', 'reason'] as const,
      registers: [registry],
    }),
    smtpReplies: new Counter({
      name: 'smtp_replies_total',
      help: 'SMTP replies received by code class',
      labelNames: ['class'] as const,
      registers: [registry],
    }),
    smtpSessionsOpen: new Gauge({ name: 'smtp_sessions_open', help: 'SMTP sessions open now', registers: [registry] }),
    smtpSessions: new Counter({
      name: 'smtp_sessions_total',
      help: 'SMTP sessions by outcome',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    dnsLookups: new Counter({
      name: 'dns_lookups_total',
      help: 'DNS lookups by record type and result (hit = answered from cache)',
      labelNames: ['type', 'result'] as const,
      registers: [registry],
    }),
    resolverTrusted: new Gauge({
      name: 'verify_resolver_trusted',
      help: '1 while at least half of VERIFY_DNS_CANARIES resolve to an MX set, 0 while the resolver is untrusted',
      registers: [registry],
    }),
    egressOpen: new Gauge({
      name: 'verify_egress_open',
      help: '1 while a canary mail server (VERIFY_SMTP_CANARIES) accepts a TCP connection on the SMTP port, 0 while none does',
      registers: [registry],
    }),
    egressReachable: new Gauge({
      name: 'verify_egress_reachable',
      help: 'Per egress (direct or a VERIFY_SOCKS_PROXY entry): 1 when it reached a canary mail server at the last check',
      labelNames: ['egress'] as const,
      registers: [registry],
    }),
    egressSessions: new Counter({
      name: 'verify_egress_sessions_total',
      help: 'SMTP sessions opened, by egress and by the MX hosts’ provider',
      labelNames: ['egress', 'provider'] as const,
      registers: [registry],
    }),
    egressBlocks: new Counter({
      name: 'verify_egress_blocks_total',
      help: 'Sessions a mail server refused by naming a blocklist or the client’s address, by egress and provider',
      labelNames: ['egress', 'provider'] as const,
      registers: [registry],
    }),
    egressSetAside: new Gauge({
      name: 'verify_egress_set_aside',
      help: 'Providers (or hosts) an egress is set aside for now, after a refusal by name (30 minutes each)',
      labelNames: ['egress'] as const,
      registers: [registry],
    }),
    privateRefusals: new Counter({
      name: 'private_address_refusals_total',
      help: 'Mail server addresses refused by the private-address guard',
      registers: [registry],
    }),
  };
}
