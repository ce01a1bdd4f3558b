/**
 * Signed, retried callbacks. Receivers need only `verifySignature`; the lists code needs
 * `checkCallbackUrl` and a `CallbackDispatcher`; a worker process runs `startCallbackConsumer`.
 * The key tool imports `@svc/webhooks/secrets` alone, which loads neither BullMQ nor HTTP; the
 * BullMQ dispatcher and consumer are behind `@svc/webhooks/bullmq`, so embedded mode loads no BullMQ.
 */
export { LIST_EVENT_TYPES, MAX_BODY_BYTES, callbackEventSchema, type CallbackEvent, type ListEventType } from './events.ts';
export {
  DEFAULT_TOLERANCE_S,
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  signatureHeader,
  verifySignature,
  type SignatureCheck,
} from './signature.ts';
export { checkCallbackUrl, type CallbackUrlCheck } from './callback-url.ts';
export { isPublicAddress } from './address-guard.ts';
export {
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  deliver,
  resolveWithSystem,
  type DeliveryOptions,
  type DeliveryOutcome,
  type DeliveryRequest,
  type ResolveHost,
} from './deliver.ts';
export { DEFAULT_RETRY_SCHEDULE, maxAttempts, nextStep, retryDelayMs, retrySchedule, type RetrySchedule } from './schedule.ts';
export {
  WEBHOOK_SECRET_PATTERN,
  WebhookSecretStore,
  generateWebhookSecret,
  sharedSecret,
  webhookSecretKey,
  type SecretSource,
} from './secrets.ts';
export type { CallbackDispatcher } from './dispatcher.ts';
export { InProcessCallbackDispatcher, type InProcessCallbackDispatcherOptions } from './in-process-dispatcher.ts';
