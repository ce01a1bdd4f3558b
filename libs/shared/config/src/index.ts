export * from './config.ts';
export * from './redis-topology.ts';
