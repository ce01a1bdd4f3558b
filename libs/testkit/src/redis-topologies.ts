/**
 * Real Redis topologies for tests: a Redis Cluster (primaries with a replica each, made with
 * `redis-cli --cluster create`) and a primary + replica watched by three Sentinels. Every server
 * is a `redis-server` process of its own on a free port, without persistence, in a temporary
 * directory, with short failure timeouts so a failover takes seconds. `close()` stops every
 * process group and removes the directory.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, requireBinary, startBinary, type ServiceProcess } from './processes.ts';
import { waitUntil } from './wait.ts';

const INSTALL = 'apt-get install redis-server';
const HOST = '127.0.0.1';

export interface RedisServerNode {
  port: number;
  process: ServiceProcess;
  /** SIGSTOP: the node keeps its sockets open and answers nothing (a frozen VM, a GC pause, a partition). */
  freeze(): void;
  thaw(): void;
  /** SIGKILL: gone at once. */
  kill(): Promise<void>;
  killed: boolean;
}

function startServer(port: number, dir: string, args: string[]): RedisServerNode {
  const process = startBinary('redis-server', [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--protected-mode',
    'no',
    // A replica (new, or an old primary rejoining) syncs at once, not after the default 5 s wait
    // for more replicas: a failover in that window would promote a replica holding nothing.
    '--repl-diskless-sync-delay',
    '0',
    ...args,
  ]);
  return serverNode(port, process);
}

function serverNode(port: number, process: ServiceProcess): RedisServerNode {
  const node: RedisServerNode = {
    port,
    process,
    killed: false,
    freeze: () => process.signal('SIGSTOP'),
    thaw: () => process.signal('SIGCONT'),
    kill: async () => {
      node.killed = true;
      await process.stop(0);
    },
  };
  return node;
}

/** How many of `nodes` (those not killed) are replicas whose link to their primary is up. */
async function replicasInSync(nodes: RedisServerNode[]): Promise<number> {
  const states = await Promise.all(
    nodes
      .filter((node) => !node.killed)
      .map((node) =>
        answers(
          node.port,
          ['INFO', 'replication'],
          (reply) => /role:slave/.test(String(reply)) && /master_link_status:up/.test(String(reply)),
        ),
      ),
  );
  return states.filter(Boolean).length;
}

/** One short-lived command, for set-up only (the node answers within `timeoutMs` or the call fails). */
export async function redisCommand(port: number, args: string[], timeoutMs = 1_000): Promise<unknown> {
  const client = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined); // the rejection below says it
  try {
    await client.connect();
    const [command, ...rest] = args;
    return await client.call(command!, ...rest);
  } finally {
    client.disconnect();
  }
}

async function answers(port: number, args: string[], test: (reply: unknown) => boolean): Promise<boolean> {
  return redisCommand(port, args).then(test, () => false);
}

function temporaryDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `svc-${label}-`));
}

export interface RedisClusterRig {
  nodes: RedisServerNode[];
  /** `REDIS_CLUSTER_NODES` for the product. */
  env: Record<string, string>;
  /** The node serving `tag`'s slot as primary now, by the cluster's own view (asked of a live node). */
  primaryFor(tag: string): Promise<RedisServerNode>;
  /** True once the cluster state is ok again and `tag`'s slot is served by a primary other than `old`. */
  promotedFor(tag: string, old: RedisServerNode): Promise<boolean>;
  /** True while every primary has a replica in sync (set up, or healed after a failover). */
  inSync(): Promise<boolean>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  primaries?: number;
  /** Replicas per primary: 1 (default) or 0, for a benchmark that measures the primaries' work alone. */
  replicas?: 0 | 1;
  /** cluster-node-timeout: how long a node may not answer before it counts as failed. */
  nodeTimeoutMs?: number;
}

/** A Redis Cluster of `primaries` primaries with `replicas` replica each (default 3 + 3). */
export async function startRedisCluster(options: ClusterOptions = {}): Promise<RedisClusterRig> {
  requireBinary('redis-server', INSTALL);
  requireBinary('redis-cli', INSTALL);
  const primaries = options.primaries ?? 3;
  const replicas = options.replicas ?? 1;
  const count = primaries * (1 + replicas);
  const dir = temporaryDir('cluster');
  const nodes: RedisServerNode[] = [];
  const close = async () => {
    await Promise.all(nodes.map((node) => node.process.stop(1_000)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < count; i++) {
      const [port, busPort] = [await freePort(), await freePort()];
      nodes.push(
        startServer(port, dir, [
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPort),
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          String(options.nodeTimeoutMs ?? 1_000),
          // A replica may take over however long it was cut off (its data is all there is).
          '--cluster-replica-validity-factor',
          '0',
        ]),
      );
    }
    for (const node of nodes)
      await waitUntil(() => answers(node.port, ['PING'], (reply) => reply === 'PONG'), 10_000, `redis-server on ${node.port}`);
    const created = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map((node) => `${HOST}:${node.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    const ok = (port: number) => answers(port, ['CLUSTER', 'INFO'], (reply) => String(reply).includes('cluster_state:ok'));
    for (const node of nodes) await waitUntil(() => ok(node.port), 20_000, `cluster state ok on ${node.port}`);
    await waitUntil(async () => (await replicasInSync(nodes)) === primaries * replicas, 20_000, 'every replica in sync');
  } catch (error) {
    await close();
    throw error;
  }

  // Asked of every node at once, the first answer wins: a frozen node answers nothing, and asking
  // the nodes in turn would wait out its timeout before each look (seconds in which a failover
  // test sees neither the promotion nor the readiness it is there to watch).
  const primaryPortAsking = async (port: number, tag: string): Promise<number> => {
    const [slot, shards] = await Promise.all([redisCommand(port, ['CLUSTER', 'KEYSLOT', tag]), redisCommand(port, ['CLUSTER', 'SLOTS'])]);
    if (typeof slot !== 'number' || !Array.isArray(shards)) throw new Error(`node ${port} gave no slot map`);
    const shard = (shards as Array<[number, number, [string, number]]>).find(([from, to]) => slot >= from && slot <= to);
    if (shard === undefined) throw new Error(`node ${port} serves no slot ${slot}`);
    return shard[2][1];
  };
  const primaryPort = (tag: string): Promise<number | undefined> =>
    Promise.any(nodes.map((node) => primaryPortAsking(node.port, tag))).catch(() => undefined);
  return {
    nodes,
    env: { REDIS_CLUSTER_NODES: nodes.map((node) => `${HOST}:${node.port}`).join(',') },
    primaryFor: async (tag) => {
      const port = await primaryPort(tag);
      const node = nodes.find((candidate) => candidate.port === port);
      if (node === undefined) throw new Error(`no primary found for {${tag}}`);
      return node;
    },
    promotedFor: async (tag, old) => {
      const port = await primaryPort(tag);
      if (port === undefined || port === old.port) return false;
      return answers(port, ['CLUSTER', 'INFO'], (reply) => String(reply).includes('cluster_state:ok'));
    },
    inSync: async () => (await replicasInSync(nodes)) === primaries * replicas,
    close,
  };
}

export interface ReplicaPair {
  primary: RedisServerNode;
  replica: RedisServerNode;
  /**
   * What a managed service does on a failover: the replica becomes primary and the old primary
   * its replica (it answers READONLY to writes from then on, on connections still open to it).
   */
  switchOver(): Promise<void>;
  close(): Promise<void>;
}

/** A primary and its replica, no Sentinel: failovers are made by hand (`switchOver`). */
export async function startRedisReplicaPair(): Promise<ReplicaPair> {
  requireBinary('redis-server', INSTALL);
  const dir = temporaryDir('pair');
  const primary = startServer(await freePort(), dir, []);
  const replica = startServer(await freePort(), dir, ['--replicaof', HOST, String(primary.port)]);
  const close = async () => {
    await Promise.all([primary, replica].map((node) => node.process.stop(1_000)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(async () => (await replicasInSync([primary, replica])) === 1, 15_000, 'the replica to sync');
  } catch (error) {
    await close();
    throw error;
  }
  return {
    primary,
    replica,
    switchOver: async () => {
      await redisCommand(replica.port, ['REPLICAOF', 'NO', 'ONE']);
      await redisCommand(primary.port, ['REPLICAOF', HOST, String(replica.port)]);
    },
    close,
  };
}

export interface SentinelRig {
  primary: RedisServerNode;
  replica: RedisServerNode;
  sentinels: RedisServerNode[];
  master: string;
  /** `REDIS_SENTINELS` and `REDIS_SENTINEL_MASTER` for the product. */
  env: Record<string, string>;
  /** The port the sentinels name as master now. */
  masterPort(): Promise<number | undefined>;
  /** True while the data node that is not the master replicates from it, in sync. */
  inSync(): Promise<boolean>;
  close(): Promise<void>;
}

export interface SentinelOptions {
  master?: string;
  downAfterMs?: number;
  failoverTimeoutMs?: number;
}

/** A primary and its replica, watched by three Sentinels (quorum 2). */
export async function startRedisSentinel(options: SentinelOptions = {}): Promise<SentinelRig> {
  requireBinary('redis-server', INSTALL);
  const master = options.master ?? 'mymaster';
  const dir = temporaryDir('sentinel');
  const started: RedisServerNode[] = [];
  const close = async () => {
    await Promise.all(started.map((node) => node.process.stop(1_000)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const primary = startServer(await freePort(), dir, []);
    started.push(primary);
    const replica = startServer(await freePort(), dir, ['--replicaof', HOST, String(primary.port)]);
    started.push(replica);
    await waitUntil(
      () => answers(replica.port, ['INFO', 'replication'], (reply) => String(reply).includes('master_link_status:up')),
      15_000,
      'the replica to sync',
    );
    const sentinels: RedisServerNode[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const file = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        file,
        [
          `sentinel monitor ${master} ${HOST} ${primary.port} 2`,
          `sentinel down-after-milliseconds ${master} ${options.downAfterMs ?? 1_000}`,
          `sentinel failover-timeout ${master} ${options.failoverTimeoutMs ?? 3_000}`,
          `sentinel parallel-syncs ${master} 1`,
          '',
        ].join('\n'),
      );
      const node = serverNode(
        port,
        startBinary('redis-server', [file, '--sentinel', '--port', String(port), '--bind', HOST, '--dir', dir, '--protected-mode', 'no']),
      );
      sentinels.push(node);
      started.push(node);
    }
    // Every sentinel sees the replica and the other sentinels before a failover can be elected.
    for (const sentinel of sentinels)
      await waitUntil(
        () =>
          answers(sentinel.port, ['SENTINEL', 'MASTER', master], (reply) => {
            const fields = Array.isArray(reply) ? (reply as string[]) : [];
            const at = (name: string) => fields[fields.indexOf(name) + 1];
            return at('num-slaves') === '1' && at('num-other-sentinels') === '2';
          }),
        20_000,
        `sentinel ${sentinel.port} to see the replica and its peers`,
      );
    const masterPort = async () => {
      for (const sentinel of sentinels) {
        const reply = await redisCommand(sentinel.port, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', master]).catch(() => undefined);
        if (Array.isArray(reply)) return Number(reply[1]);
      }
      return undefined;
    };
    return {
      primary,
      replica,
      sentinels,
      master,
      env: { REDIS_SENTINELS: sentinels.map((node) => `${HOST}:${node.port}`).join(','), REDIS_SENTINEL_MASTER: master },
      masterPort,
      inSync: async () => (await replicasInSync([primary, replica])) === 1,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
