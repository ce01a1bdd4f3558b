/**
 * A list queue opened while its Cluster connection is between `connect` and `ready` (what the
 * gateway did at start-up when its store connection was a round trip behind its transport's)
 * queues lists once the connection is ready. BullMQ's queue asks the server's version as it opens
 * and takes a Cluster's `connect` for ready; our connections refuse commands until `ready`, and a
 * queue whose opening failed refused every list from then on: on a fresh cluster a list stayed
 * `queued` until the janitor queued it, past the failover test's 20 s poll.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '@svc/config';
import { queueConnection } from '@svc/jobs/bullmq';
import { waitForRedis, type Redis } from '@svc/jobs/redis';
import { BullListQueue } from '@svc/lists/bullmq';
import { startRedisCluster, uniquePrefix, type RedisClusterRig } from '@svc/testkit';

let cluster: RedisClusterRig | undefined;
const connections: Redis[] = [];
beforeAll(async () => {
  cluster = await startRedisCluster({ primaries: 3, replicas: 0 });
});
afterAll(async () => {
  for (const connection of connections) connection.disconnect();
  await cluster?.close();
});

/** A gateway's store connection to the cluster, caught in its `connect` state. */
async function connectionInConnectState(): Promise<Redis> {
  const topology = loadConfig({ REDIS_CLUSTER_NODES: cluster!.env.REDIS_CLUSTER_NODES }).redis;
  if (topology === undefined) throw new Error('no cluster topology');
  const connection = queueConnection(topology, 'request', 'test-list-queue');
  connections.push(connection);
  await new Promise<void>((resolve) => connection.once('connect', () => resolve()));
  expect(connection.status, 'the window this test is about was missed').toBe('connect');
  return connection;
}

const job = (chunk: number) => ({ job: { kind: 'chunk' as const, listId: 'lst_0123456789abcdef01234567', chunk } });

it('a list queue opened before its cluster connection is ready queues lists once it is', async () => {
  const connection = await connectionInConnectState();
  const queue = new BullListQueue(connection, uniquePrefix('list-queue'));
  try {
    await waitForRedis(connection, 10_000);
    await expect(queue.add([job(0)])).resolves.toBeUndefined();
    await expect(queue.add([job(1)])).resolves.toBeUndefined();
  } finally {
    await queue.close();
  }
});

it('an add before the connection is ready is refused at once, and the next one, once it is, queues', async () => {
  const connection = await connectionInConnectState();
  const queue = new BullListQueue(connection, uniquePrefix('list-queue'));
  try {
    await expect(queue.add([job(0)])).rejects.toThrow(/not ready/);
    await waitForRedis(connection, 10_000);
    await expect(queue.add([job(0)])).resolves.toBeUndefined();
  } finally {
    await queue.close();
  }
});
