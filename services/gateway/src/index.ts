export { buildGateway, type GatewayApp } from './app.ts';
export { BODY_LIMIT_BYTES } from './errors/api-errors.ts';
export { serve } from './server.ts';
export { MemoryKeyStore, type KeyStore, type ApiKeyRecord } from './stores/key-store.ts';
export { RedisKeyStore } from './stores/redis-key-store.ts';
export { MemoryMeter, type Meter } from './stores/meter.ts';
export { RedisMeter } from './stores/redis-meter.ts';
export { generateApiKey, hashApiKey } from './auth/api-keys.ts';
export type { GatewayDeps } from './types.ts';
