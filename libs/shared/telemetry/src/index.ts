export * from './logger.ts';
export * from './metrics.ts';
