export { createVerifyHandler, createVerifier, type VerifyHandlerOptions } from './handler.ts';
export type { Verifier, VerifyOptions, VerifyOutcome } from './engine/verifier.ts';
export type { SessionLimiter } from './engine/host-limiter.ts';
