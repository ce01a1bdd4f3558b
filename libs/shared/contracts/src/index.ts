export * from './errors.ts';
export * from './operations.ts';
export type { JobKind } from './job-kind.ts';
export * from './verify.ts';
export type { BeforeSession, VerifyOptions, VerifyOutcome } from './verify-call.ts';
export * from './qr/index.ts';
export * from './lists.ts';
export * from './list-rules.ts';
export * from './results-file.ts';
