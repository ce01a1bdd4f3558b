/**
 * Which Redis the distributed mode runs on (decisions, "Redis topologies"): one node or a managed
 * primary endpoint (`REDIS_URL`), a Redis Cluster (`REDIS_CLUSTER_NODES`), or a primary found
 * through Sentinel (`REDIS_SENTINELS`, or a `redis+sentinel://` URL). Pure: the connection factory
 * in `@svc/jobs/redis` turns this into ioredis clients.
 */
export interface HostPort {
  host: string;
  port: number;
}

/** Credentials and TLS of the data nodes (a `redis://` URL carries its own). */
export interface RedisAuth {
  username: string | undefined;
  password: string | undefined;
  tls: boolean;
}

export type RedisTopology = (
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: HostPort[]; auth: RedisAuth }
  | { kind: 'sentinel'; sentinels: HostPort[]; master: string; auth: RedisAuth; db: number }
) & {
  /** Longest a command on a request's path may take (REDIS_COMMAND_TIMEOUT_MS). */
  commandTimeoutMs: number;
};

export interface RedisEnv {
  REDIS_URL?: string | undefined;
  REDIS_CLUSTER_NODES?: string[] | undefined;
  REDIS_SENTINELS?: string[] | undefined;
  REDIS_SENTINEL_MASTER: string;
  REDIS_USERNAME?: string | undefined;
  REDIS_PASSWORD?: string | undefined;
  REDIS_TLS: boolean;
  REDIS_COMMAND_TIMEOUT_MS: number;
}

/** `host:port` (IPv6 in brackets) as the schema admitted it; the port defaults to `fallback`. */
export function parseHostPort(value: string, fallback: number): HostPort {
  const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(value) ?? /^([^:]+)(?::(\d+))?$/.exec(value);
  if (match === null) throw new Error(`not a host:port: ${value}`);
  return { host: match[1]!, port: match[2] === undefined ? fallback : Number(match[2]) };
}

/**
 * `redis+sentinel://[user:password@]host:port[,host:port...][/master[/db]]`, the form several
 * clients and operators use; the master defaults to REDIS_SENTINEL_MASTER.
 */
export function parseSentinelUrl(
  url: string,
  defaultMaster: string,
): Omit<Extract<RedisTopology, { kind: 'sentinel' }>, 'commandTimeoutMs'> | string {
  const match = /^redis\+sentinel:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/]+)(?:\/([A-Za-z0-9_.-]+)?(?:\/(\d+))?)?\/?$/.exec(url);
  if (match === null) return `REDIS_URL: expected redis+sentinel://[user:password@]host:port[,host:port]/master`;
  const [, user, password, hosts = '', master, db] = match;
  return {
    kind: 'sentinel',
    sentinels: hosts.split(',').map((host) => parseHostPort(host, 26379)),
    master: master ?? defaultMaster,
    db: db === undefined ? 0 : Number(db),
    auth: {
      username: user === undefined || user === '' ? undefined : decodeURIComponent(user),
      password: password === undefined || password === '' ? undefined : decodeURIComponent(password),
      tls: false,
    },
  };
}

/**
 * A `REDIS_URL` without a password takes REDIS_USERNAME / REDIS_PASSWORD: Kubernetes gives every
 * pod Redis's password from a Secret as REDIS_PASSWORD, whatever the topology. A URL that carries
 * its own credentials keeps them.
 */
function withCredentials(url: string, auth: RedisAuth): string {
  if (auth.password === undefined) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.password !== '') return url;
  parsed.password = encodeURIComponent(auth.password);
  if (auth.username !== undefined && parsed.username === '') parsed.username = encodeURIComponent(auth.username);
  return parsed.toString();
}

/** The topology the environment names, undefined for embedded mode, or a message naming the conflict. */
export function redisTopology(env: RedisEnv): RedisTopology | undefined | string {
  const set = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter((name) => env[name] !== undefined);
  if (set.length > 1) return `${set.join(' and ')} are both set: choose one Redis topology`;
  const commandTimeoutMs = env.REDIS_COMMAND_TIMEOUT_MS;
  const auth: RedisAuth = { username: env.REDIS_USERNAME, password: env.REDIS_PASSWORD, tls: env.REDIS_TLS };
  if (env.REDIS_CLUSTER_NODES !== undefined)
    return { kind: 'cluster', nodes: env.REDIS_CLUSTER_NODES.map((node) => parseHostPort(node, 6379)), auth, commandTimeoutMs };
  if (env.REDIS_SENTINELS !== undefined)
    return {
      kind: 'sentinel',
      sentinels: env.REDIS_SENTINELS.map((node) => parseHostPort(node, 26379)),
      master: env.REDIS_SENTINEL_MASTER,
      auth,
      db: 0,
      commandTimeoutMs,
    };
  if (env.REDIS_URL === undefined) return undefined;
  if (!env.REDIS_URL.startsWith('redis+sentinel:')) return { kind: 'single', url: withCredentials(env.REDIS_URL, auth), commandTimeoutMs };
  const sentinel = parseSentinelUrl(env.REDIS_URL, env.REDIS_SENTINEL_MASTER);
  return typeof sentinel === 'string' ? sentinel : { ...sentinel, auth: { ...sentinel.auth, tls: env.REDIS_TLS }, commandTimeoutMs };
}

/** For logs and errors: where the topology points, never its credentials. */
export function describeTopology(topology: RedisTopology): string {
  const list = (nodes: HostPort[]) => nodes.map((node) => `${node.host}:${node.port}`).join(',');
  if (topology.kind === 'cluster') return `cluster ${list(topology.nodes)}`;
  if (topology.kind === 'sentinel') return `sentinel ${topology.master} via ${list(topology.sentinels)}`;
  return topology.url.replace(/\/\/[^@/]*@/, '//');
}
