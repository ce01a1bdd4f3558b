export * from './logger.ts';
export * from './error-log.ts';
export * from './metrics.ts';
