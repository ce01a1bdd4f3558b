export { createVerifyHandler, createVerifier, type VerifyHandlerOptions } from './handler.ts';
export { createVerifyWork, type VerifyWork, type VerifyWorkOptions } from './worker-parts.ts';
export type { Verifier, VerifyOptions, VerifyOutcome } from './engine/verifier.ts';
export type { SessionLimiter } from './engine/host-limiter.ts';
export { LocalPriorityLimiter, RedisHostLimiter, type PrioritySessionLimiter, type SessionPriority } from './engine/shared-host-limiter.ts';
export { JANITOR_INTERVAL_MS, createListProcessor } from './lists/assemble.ts';
