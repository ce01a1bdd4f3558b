import { pino, type Logger, type LoggerOptions } from 'pino';

/**
 * Paths that must never reach a log line: credentials in headers and API keys in bodies or
 * arguments. Shared by every process so a new log call cannot forget them.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'apiKey',
  'key',
  '*.apiKey',
  '*.key',
];

export function loggerOptions(level: string, name: string): LoggerOptions {
  return { level, name, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
}

export function createLogger(level: string, name: string): Logger {
  return pino(loggerOptions(level, name));
}

export type { Logger };
