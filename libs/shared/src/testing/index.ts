export { findRedis, NO_REDIS_MESSAGE } from './find-redis.ts';
export { testRedisUrl, uniquePrefix, dropPrefix } from './redis.ts';
export { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';
export { scanSvg, scanModules } from './qr-scan.ts';
