/**
 * The job seam as the gateway and handlers see it: the interface, the in-process transport and
 * its errors. BullMQ lives behind `@svc/jobs/bullmq`, Redis connections behind `@svc/jobs/redis`
 * and the worker process behind `@svc/jobs/worker`, so code that needs only types loads neither.
 */
export * from './transport.ts';
export * from './transport-errors.ts';
export { InProcessTransport } from './in-process.ts';
export { exitOnSignals } from './signals.ts';
export { deadlineSignal, linkedSignal } from './deadline-signal.ts';
export { throttleProgress, PROGRESS_INTERVAL_MS, type ProgressThrottle } from './progress-throttle.ts';
