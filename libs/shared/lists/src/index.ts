/**
 * Lists, one home for the gateway (creation, reading, cancelling) and the verify-workers (the
 * work). This entry holds what both sides share: the record, the store and the work queue
 * (list-end callbacks go through `@svc/webhooks`). The rest loads only where it is used: the list
 * service and its uploads and results at `@svc/lists/service` (the gateway's doors), the processor
 * at `@svc/lists/processor` (the workers), Redis and BullMQ at `@svc/lists/redis` and
 * `@svc/lists/bullmq`.
 */
export * from './model.ts';
export * from './store.ts';
export { MemoryListStore } from './memory-store.ts';
export { decodeCursor, encodeCursor, nextStatus } from './rules.ts';
export * from './queue.ts';
export { newListIdFor, slotOfTag } from './list-id.ts';
