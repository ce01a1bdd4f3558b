export { findRedis, NO_REDIS_MESSAGE, type FoundRedis } from './find-redis.ts';
export { testRedisUrl, uniquePrefix, dropPrefix } from './redis.ts';
export { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';
export { decodePng, scanPng, scanSvg, scanModules } from './qr-scan.ts';
export { waitUntil } from './wait.ts';
export { propertyRuns, unicodeText } from './properties.ts';
export {
  RIG_CANARY_DOMAIN,
  startDnsServer,
  startPortCanary,
  type RigDnsBehaviour,
  type RigDnsServer,
  type Zone,
  type ZoneEntry,
} from './mail/dns-server.ts';
export * from './mail/smtp-server.ts';
export { startMailRig, type MailRig } from './mail/rig.ts';
export * from './processes.ts';
export { awaitRunBuild, runBuildReady } from './run-build.ts';
export { RecordingCallbackDispatcher, type RecordedCallbackEvent } from './recording-dispatcher.ts';
export { verifyResult } from './verify-result.ts';
export {
  startRedisCluster,
  startRedisSentinel,
  startRedisReplicaPair,
  type ReplicaPair,
  redisCommand,
  type RedisClusterRig,
  type SentinelRig,
  type RedisServerNode,
} from './redis-topologies.ts';
export { startSocksServer, type RigSocksServer } from './mail/socks-server.ts';
export { retainedPerOp, reportRetained, runGcFixture, settledHeapUsed, type RetainedPerOp } from './retained-heap.ts';
