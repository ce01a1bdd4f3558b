export { createVerifyHandler, createVerifier, type VerifyHandlerOptions } from './handler.ts';
export { LocalPriorityLimiter, RedisHostLimiter, type PrioritySessionLimiter, type SessionPriority } from './engine/shared-host-limiter.ts';
export { createListProcessor, startDistributedListWork, stableCatchAllLocalPart, type DistributedListWork } from './lists/assemble.ts';
export { ListProcessor } from './lists/processor.ts';
