/**
 * Readiness as the decisions define it: 200 only when a write would succeed now. A PING answers
 * from a replica, from a primary cut off from its cluster and from one Sentinel has demoted, so
 * the probe asks each node written to for its `ROLE`, and a cluster for its `cluster_state`.
 */
import type { Cluster, Redis as SingleRedis } from 'ioredis';
import { withTimeout } from './timeout.ts';
import type { Redis } from './redis.ts';

const UNREACHABLE = 'Redis is not reachable.';

async function role(node: SingleRedis | Cluster, timeoutMs: number): Promise<string> {
  const reply = await withTimeout(node.call('ROLE'), timeoutMs);
  return Array.isArray(reply) && typeof reply[0] === 'string' ? reply[0] : 'unknown';
}

/** Why a write would fail now, or undefined when it would succeed. */
export async function writeProblem(client: Redis, timeoutMs: number): Promise<string | undefined> {
  if (client.status !== 'ready') return UNREACHABLE;
  try {
    if (!('nodes' in client)) {
      const answer = await role(client, timeoutMs);
      if (answer === 'master') return undefined;
      // A connection that only reads never meets the READONLY that makes writers reconnect: the
      // probe reconnects it, through the endpoint's name or the sentinels, to the primary of now.
      client.disconnect(true);
      return `Redis answers as ${answer}, not as a primary.`;
    }
    const info = await withTimeout(client.cluster('INFO'), timeoutMs);
    const state = /cluster_state:(\w+)/.exec(String(info))?.[1];
    if (state !== 'ok') return `Redis Cluster state is ${state ?? 'unknown'}.`;
    // Every primary the client routes slots to must still be one (a stale slot map after a
    // failover points at the demoted or dead node until it is refreshed).
    const primaries = client.nodes('master');
    if (primaries.length === 0) return 'No Redis Cluster primary known.';
    const roles = await Promise.all(primaries.map((node) => role(node, timeoutMs)));
    const wrong = roles.findIndex((answer) => answer !== 'master');
    if (wrong === -1) return undefined;
    const node = primaries[wrong]!;
    return `Redis Cluster node ${node.options.host ?? '?'}:${node.options.port ?? '?'} answers as ${roles[wrong]}, not as a primary.`;
  } catch {
    return UNREACHABLE;
  }
}
