/** The verifier's metrics. Labels are bounded: verdicts, reasons, reply classes, never an address or a domain. */
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
    privateRefusals: new Counter({
      name: 'private_address_refusals_total',
      help: 'Mail server addresses refused by the private-address guard',
      registers: [registry],
    }),
  };
}
