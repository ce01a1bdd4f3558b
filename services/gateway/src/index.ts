export { buildGateway, type GatewayApp } from './app.ts';
export { buildGatewayOn, type GatewayOnBackend } from './on-backend.ts';
export { BODY_LIMIT_BYTES } from './errors/api-errors.ts';
export { serve } from './server.ts';
export { MemoryKeyStore, type KeyStore, type ApiKeyRecord } from './stores/key-store.ts';
export { RedisKeyStore } from './stores/redis-key-store.ts';
export { generateApiKey, hashApiKey } from './auth/api-keys.ts';
export type { GatewayDeps } from './types.ts';
export { consoleLine, consoleUrl } from './console-url.ts';
