/**
 * The one Redis connection factory of every process (decisions, "Redis topologies"): one node,
 * a Cluster or a Sentinel-managed primary, all through ioredis' own clients.
 *
 * Two kinds of connection, because the two sides want opposite failure behaviour:
 * - `request`: commands on a request's path (keys, rate limits, meters, enqueues). No offline
 *   queue, no resend, and `REDIS_COMMAND_TIMEOUT_MS` on every command, so a frozen or partitioned
 *   Redis gives a quick 503 instead of a hang.
 * - `background`: a worker's own commands (caches, SMTP session slots, list state, callbacks).
 *   Like `request`, but with a longer timeout (5 x, at least 5 s): nobody waits on the line, and a
 *   busy machine must not turn slow answers into failed list chunks.
 * - `blocking`: workers and QueueEvents. BullMQ's blocking commands need `maxRetriesPerRequest:
 *   null` and no command timeout, and a worker should ride out a Redis restart rather than die.
 *
 * Both follow a failover without a restart: a `READONLY` reply (an old primary demoted, a managed
 * endpoint that moved) reconnects, Sentinel clients watch for `+switch-master`, and a cluster
 * refreshes its slot map often and on every redirection.
 */
import { Cluster, Redis as SingleRedis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisTopology } from '@svc/config';
import type { RateLimitedLog } from '@svc/telemetry';

/** A connection of any topology: the commands the product uses are the same on both. */
export type Redis = SingleRedis | Cluster;

export type RedisRole = 'request' | 'background' | 'blocking';

/** A topology from the configuration, or a plain `redis://` URL (tools, tests, benchmarks). */
export type RedisTarget = RedisTopology | string;

/** A bare URL is a tool's or a test's: no request deadline to keep, so a patient command timeout. */
const topologyOf = (target: RedisTarget): RedisTopology =>
  typeof target === 'string' ? { kind: 'single', url: target, commandTimeoutMs: 5_000 } : target;

/** Longest pause between reconnects: a promoted replica is found within this of its promotion. */
const MAX_RECONNECT_DELAY_MS = 1_000;
/** How often a cluster client re-reads the slot map even when nothing redirected it. */
const SLOTS_REFRESH_INTERVAL_MS = 1_000;

const reconnect = (attempt: number): number => Math.min(50 * 2 ** attempt, MAX_RECONNECT_DELAY_MS);

/** `READONLY`: the node this connection writes to became a replica. 2 = reconnect and resend. */
export const reconnectOnReadonly = (error: Error): 2 | false => (/^READONLY/.test(error.message) ? 2 : false);

export function redisOptions(role: RedisRole, commandTimeoutMs = 1_000): RedisOptions {
  const common: RedisOptions = { retryStrategy: reconnect, reconnectOnError: reconnectOnReadonly };
  if (role === 'background') return { ...redisOptions('request', Math.max(5 * commandTimeoutMs, 5_000)), connectTimeout: 5_000 };
  return role === 'request'
    ? // Not resent after a lost connection by a single-node or Sentinel client. A Cluster client
      // does resend a command its node connection lost ("Connection is closed.", after
      // retryDelayOnFailover), whatever these node options say: so what bills or enqueues on this
      // path is safe to run twice (the meter by its charge id: @svc/metering's
      // charge-recorder.ts; an enqueue by its job id); a rate-limit hit may count twice in a
      // failover, erring against the caller by one. A READONLY refusal is resent: a replica ran
      // nothing.
      { ...common, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 2_000, commandTimeout: commandTimeoutMs }
    : { ...common, maxRetriesPerRequest: null, enableOfflineQueue: true, connectTimeout: 5_000 };
}

function clusterOptions(topology: Extract<RedisTopology, { kind: 'cluster' }>, role: RedisRole, name?: string): ClusterOptions {
  const node = redisOptions(role, topology.commandTimeoutMs);
  return {
    redisOptions: {
      ...node,
      connectionName: name,
      username: topology.auth.username,
      password: topology.auth.password,
      ...(topology.auth.tls ? { tls: {} } : {}),
    },
    // Writes and reads both go to primaries: a replica may lag behind what was just billed.
    scaleReads: 'master',
    enableOfflineQueue: role === 'blocking',
    maxRedirections: 16,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    slotsRefreshTimeout: Math.max(500, topology.commandTimeoutMs),
    slotsRefreshInterval: SLOTS_REFRESH_INTERVAL_MS,
    clusterRetryStrategy: reconnect,
  };
}

/** Opens a connection of `role` on the topology (never connects lazily: errors show at once). */
export function openRedis(target: RedisTarget, role: RedisRole, name?: string): Redis {
  const topology = topologyOf(target);
  if (topology.kind === 'cluster')
    return new Cluster(
      topology.nodes.map((node) => ({ host: node.host, port: node.port })),
      clusterOptions(topology, role, name),
    );
  const options = { ...redisOptions(role, topology.commandTimeoutMs), connectionName: name };
  if (topology.kind === 'single') return new SingleRedis(topology.url, options);
  return new SingleRedis({
    ...options,
    sentinels: topology.sentinels,
    name: topology.master,
    db: topology.db,
    username: topology.auth.username,
    password: topology.auth.password,
    ...(topology.auth.tls ? { tls: {} } : {}),
    role: 'master',
    // Subscribes to the sentinels' +switch-master and reconnects at once, not at the next error.
    failoverDetector: true,
    sentinelRetryStrategy: reconnect,
    sentinelCommandTimeout: topology.commandTimeoutMs,
  });
}

/**
 * ioredis emits 'error' on every failed reconnect (without a listener Node would crash): with a
 * `report`, each kind of error is logged rate-limited with the connection's name.
 */
export function createRedis(topology: RedisTarget, role: RedisRole, name?: string, report?: RateLimitedLog): Redis {
  const client = openRedis(topology, role, name);
  client.on('error', (error: Error & { code?: string }) => {
    report?.('error', `redis:${name}:${error.code ?? error.message}`, { component: 'redis', connection: name, err: error }, 'Redis error');
  });
  return client;
}

/** Waits until the client is connected, or rejects after `timeoutMs`. */
export async function waitForRedis(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error(`Redis not reachable within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}

export { writeProblem } from './redis-health.ts';
