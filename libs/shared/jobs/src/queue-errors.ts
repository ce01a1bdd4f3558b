/**
 * Where the errors of the product's queues and their Redis connections go: the process's
 * rate-limited error log (at most one line per kind per 10 s, with a count of those left out), so
 * that an outage is reported, never swallowed, and never a flood.
 */
import { createLogger, errorKind, type Logger, type RateLimitedLog } from '@svc/telemetry';
import { createRedis, type Redis, type RedisRole, type RedisTarget } from './redis.ts';

let fallbackLogger: Logger | undefined;

/** The error log of a queue whose owner gave no logger: its errors still reach standard output. */
export function queueErrorLog(logger: Logger | undefined): RateLimitedLog {
  return (logger ?? (fallbackLogger ??= createLogger('warn', 'durable-queue'))).errorLog;
}

interface ErrorSource {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * An error of the connection itself (reset, refused, timed out): BullMQ hands the connection's
 * errors on to the queue or worker on it, and an outage hits every connection of the process at
 * once, so these are one kind per code for the whole process, whoever reports them.
 */
const isConnectionError = (error: unknown): boolean => error instanceof Error && 'syscall' in error;

const kindOf = (component: string, error: unknown): string =>
  isConnectionError(error) ? `redis:${errorKind(error)}` : `${component}:${errorKind(error)}`;

/** Writes a component's `error` events to the error log, one kind per component and error code. */
export function watchErrors(source: ErrorSource, log: RateLimitedLog, component: string, fields: Record<string, unknown> = {}): void {
  source.on('error', (error: Error) => log('error', kindOf(component, error), { ...fields, component, err: error }, `${component} error`));
}

/**
 * The error log of the process's Redis connections: keyed by what went wrong, not by which
 * connection (the line names the connection that reported first; the count covers them all).
 */
export function connectionErrorLog(logger: Logger | undefined): RateLimitedLog {
  const log = queueErrorLog(logger);
  return (level, _kind, fields, message) => log(level, kindOf('redis', fields.err), fields, message);
}

/**
 * A Redis connection of `role` on the configured topology (one node, Cluster or Sentinel, or a
 * plain URL in tools and tests), its errors going to the process's connection error log.
 */
export const queueConnection = (target: RedisTarget, role: RedisRole, name: string, logger?: Logger): Redis =>
  createRedis(target, role, name, connectionErrorLog(logger));
