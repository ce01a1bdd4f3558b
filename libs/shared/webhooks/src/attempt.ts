/**
 * One attempt at one event, as both dispatchers run it: read the key's secret now (a rotated
 * secret signs the very next attempt), sign with the time of this attempt, deliver, and decide
 * what comes next from the retry schedule. Every outcome is logged here, in one place, with the
 * callback's origin only (a URL's path or query may carry the receiver's own token).
 */
import type { Logger } from '@svc/telemetry';
import { deliver, type DeliveryOptions, type DeliveryOutcome } from './deliver.ts';
import type { CallbackEvent } from './events.ts';
import { nextStep, type RetrySchedule } from './schedule.ts';
import type { SecretSource } from './secrets.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature.ts';

export interface AttemptContext {
  secrets: SecretSource;
  schedule: RetrySchedule;
  logger: Logger;
  delivery: Omit<DeliveryOptions, 'signal'>;
  signal?: AbortSignal;
}

export type AttemptResult =
  { outcome: 'delivered'; status: number } | { outcome: 'retry'; delayMs: number; reason: string } | { outcome: 'gave-up'; reason: string };

const originOf = (url: string): string => (URL.canParse(url) ? new URL(url).origin : '(unparsable)');

async function send(event: CallbackEvent, context: AttemptContext): Promise<DeliveryOutcome> {
  let secret: string | undefined;
  try {
    secret = await context.secrets(event.keyId);
  } catch {
    return { kind: 'failed', reason: 'webhook secret store unreachable' };
  }
  // Never sent unsigned: the operator can still make one (`keys webhook-secret`) within the window.
  if (secret === undefined) return { kind: 'failed', reason: 'the key has no webhook secret (keys webhook-secret NAME makes one)' };
  const headers = {
    [EVENT_ID_HEADER]: event.id,
    [SIGNATURE_HEADER]: signatureHeader(secret, event.body, Math.floor(Date.now() / 1_000)),
  };
  return deliver({ url: event.url, body: event.body, headers }, { ...context.delivery, signal: context.signal });
}

/** `attempt` counts from 1; `enqueuedAt` (epoch ms) starts the retry window. */
export async function attemptDelivery(
  event: CallbackEvent,
  attempt: number,
  enqueuedAt: number,
  context: AttemptContext,
): Promise<AttemptResult> {
  const log = context.logger.child({ eventId: event.id, event: event.type, keyId: event.keyId, callback: originOf(event.url), attempt });
  const outcome = await send(event, context);
  if (outcome.kind === 'delivered') {
    log.info({ status: outcome.status }, 'callback delivered');
    return { outcome: 'delivered', status: outcome.status };
  }
  if (context.signal?.aborted === true) {
    log.info('callback attempt cancelled by shutdown');
    return { outcome: 'gave-up', reason: 'shutdown' };
  }
  if (outcome.kind === 'refused') {
    log.warn({ reason: outcome.reason }, 'callback refused by the SSRF guard: not sent, not retried');
    return { outcome: 'gave-up', reason: outcome.reason };
  }
  const step = nextStep(context.schedule, attempt, enqueuedAt, Date.now());
  if (step.retry) {
    log.warn({ reason: outcome.reason, retryInMs: step.delayMs }, 'callback attempt failed: will retry');
    return { outcome: 'retry', delayMs: step.delayMs, reason: outcome.reason };
  }
  const hours = Math.round(context.schedule.giveUpAfterMs / 36_000) / 100;
  log.error({ reason: outcome.reason }, `callback undelivered after ${attempt} attempts over ${hours} h: giving up`);
  return { outcome: 'gave-up', reason: outcome.reason };
}
