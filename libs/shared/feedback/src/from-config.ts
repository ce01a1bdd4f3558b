/** The feedback of a deployment from its configuration rows (decisions, "Configuration of the service"). */
import { generateHashSecret } from './address-hash.ts';
import type { FeedbackSettings } from './effects.ts';
import { Feedback, type FeedbackScope } from './feedback.ts';
import { MemoryFeedbackStore } from './memory-store.ts';
import type { FeedbackStore } from './store.ts';

export interface FeedbackEnv {
  FEEDBACK_SCOPE: FeedbackScope;
  FEEDBACK_BOUNCE_TTL_DAYS: number;
  FEEDBACK_DELIVERY_SETTLE_H: number;
  HISTORY_RETENTION_DAYS: number;
  HISTORY_HASH_SECRET?: string | undefined;
}

export const settingsOf = (env: FeedbackEnv): FeedbackSettings => ({
  bounceTtlMs: env.FEEDBACK_BOUNCE_TTL_DAYS * 86_400_000,
  deliverySettleMs: env.FEEDBACK_DELIVERY_SETTLE_H * 3_600_000,
  retentionMs: env.HISTORY_RETENTION_DAYS * 86_400_000,
});

export function feedbackFromConfig(env: FeedbackEnv, store: FeedbackStore, keptSecret: () => Promise<string>): Feedback {
  const configured = env.HISTORY_HASH_SECRET;
  return new Feedback({
    store,
    secret: configured === undefined ? keptSecret : () => Promise.resolve(configured),
    settings: settingsOf(env),
    scope: env.FEEDBACK_SCOPE,
  });
}

/**
 * Embedded mode: memory, and a secret made at start-up when none is configured (the memory dies
 * with it anyway). Made once by the embedded backend (`@svc/backend`), whose gateway and verifier
 * share it.
 */
export function memoryFeedback(env: FeedbackEnv): Feedback {
  const secret = generateHashSecret();
  return feedbackFromConfig(env, new MemoryFeedbackStore(settingsOf(env).retentionMs), () => Promise.resolve(secret));
}
