/**
 * Politeness metrics (decisions, "Politeness at volume"): throttles, the current back-off, and
 * sessions and recipients per provider. Labels are bounded: providers from the provider table
 * (`other` for the rest), egresses from the configuration.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { GateEvents, GateTarget } from './session-gate.ts';

export function createPolitenessMetrics(registry: Registry) {
  return {
    throttled: new Counter({
      name: 'verify_throttled_total',
      help: 'Throttle replies received from a mail provider (its whole provider backs off for that egress)',
      labelNames: ['provider', 'egress'] as const,
      registers: [registry],
    }),
    backoffSeconds: new Gauge({
      name: 'verify_provider_backoff_seconds',
      help: 'Length of the latest back-off of a provider for an egress (it doubles on consecutive throttles, up to 900 s)',
      labelNames: ['provider', 'egress'] as const,
      registers: [registry],
    }),
    backoffUntil: new Gauge({
      name: 'verify_provider_backoff_until_seconds',
      help: 'Unix time at which the latest back-off of a provider for an egress ends (throttled while it is in the future)',
      labelNames: ['provider', 'egress'] as const,
      registers: [registry],
    }),
    sessions: new Counter({
      name: 'verify_provider_sessions_total',
      help: 'SMTP sessions let through the politeness gate, by provider',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    recipients: new Counter({
      name: 'verify_provider_recipients_total',
      help: 'Recipients granted to SMTP sessions by the provider budgets, by provider',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    refused: new Counter({
      name: 'verify_provider_waits_exhausted_total',
      help: 'Sessions not opened within the deadline because of a back-off or a spent budget (their addresses are throttled)',
      labelNames: ['provider', 'why'] as const,
      registers: [registry],
    }),
  };
}

/** The gate's events as metrics on `registry` (once per process: the politeness state holds them). */
export function politenessEvents(registry: Registry | undefined): GateEvents {
  if (registry === undefined) return {};
  const m = createPolitenessMetrics(registry);
  const provider = (target: GateTarget) => target.provider ?? 'other';
  return {
    onThrottle: (target, state) => {
      m.throttled.inc({ provider: provider(target), egress: target.egress });
      m.backoffSeconds.set({ provider: provider(target), egress: target.egress }, state.delayMs / 1_000);
      m.backoffUntil.set({ provider: provider(target), egress: target.egress }, state.until / 1_000);
    },
    onSession: (target, recipients) => {
      m.sessions.inc({ provider: provider(target) });
      m.recipients.inc({ provider: provider(target) }, recipients);
    },
    onRefused: (target, why) => m.refused.inc({ provider: provider(target), why }),
  };
}
