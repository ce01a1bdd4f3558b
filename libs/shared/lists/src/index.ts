/**
 * Lists shared by the gateway (creation, reading, cancelling) and the verify-workers (the work):
 * the store and the work queue (list-end callbacks go through `@svc/webhooks`). Redis and BullMQ live behind
 * `@svc/lists/redis` and `@svc/lists/bullmq`.
 */
export * from './model.ts';
export * from './store.ts';
export { MemoryListStore } from './memory-store.ts';
export { decodeCursor, encodeCursor, nextStatus } from './rules.ts';
export * from './queue.ts';
export { newListIdFor, slotOfTag } from './list-id.ts';
