/**
 * One backend per mode, picked in one place: `createBackend` reads whether a Redis is configured.
 * Distributed mode's parts are loaded only when asked for: embedded mode never loads BullMQ or the
 * Redis client (about 165 ms of start-up).
 */
import type { Config } from '@svc/config';
import type { Backend, BackendOptions } from './backend.ts';
import { createEmbeddedBackend } from './embedded.ts';

export type { Backend, BackendOptions, BackendProcess, EmbeddedBackend, ListWorkOptions, ServeOptions, StateStore } from './backend.ts';
export { createEmbeddedBackend } from './embedded.ts';
export { jsonCodec, MemoryTtlCache, RedisTtlCache, ttlCacheIn, type TtlCache, type ValueCodec } from './ttl-cache.ts';

export async function createBackend(config: Config, options: BackendOptions): Promise<Backend> {
  if (config.mode === 'embedded') return createEmbeddedBackend(config, options);
  const { createDistributedBackend } = await import('./distributed.ts');
  return createDistributedBackend(config, options);
}
