/**
 * Queues opened on a fresh Cluster take work. A list queue opened while its Cluster connection is between `connect` and `ready` (what the
 * gateway did at start-up when its store connection was a round trip behind its transport's)
 * queues lists once the connection is ready. BullMQ's queue asks the server's version as it opens
 * and takes a Cluster's `connect` for ready; our connections refuse commands until `ready`, and a
 * queue whose opening failed refused every list from then on: on a fresh cluster a list stayed
 * `queued` until the janitor queued it, past the failover test's 20 s poll. The gateway's job
 * transport opens its queues only once its connection is ready, for the same reason.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '@svc/config';
import { z } from 'zod';
import type { JobKind } from '@svc/contracts';
import { registerHandler } from '@svc/jobs';
import { BullTransport, queueConnection, startBullWorker } from '@svc/jobs/bullmq';
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

const SHOUT: JobKind<{ text: string }, { text: string }> = {
  name: 'shout',
  payload: z.object({ text: z.string() }),
  result: z.object({ text: z.string() }),
};

it('a job transport created on a fresh cluster answers its first jobs, every time', { timeout: 60_000 }, async () => {
  const topology = loadConfig({ REDIS_CLUSTER_NODES: cluster!.env.REDIS_CLUSTER_NODES }).redis;
  if (topology === undefined) throw new Error('no cluster topology');
  const redisPrefix = uniquePrefix('transport-start');
  const handler = registerHandler(SHOUT, ({ text }) => ({ text: text.toUpperCase() }));
  const worker = startBullWorker(handler, { redis: topology, redisPrefix, concurrency: 4 });
  try {
    // Each gateway start is a new transport on new connections: the window recurs each time.
    for (let start = 0; start < 5; start += 1) {
      const transport = await BullTransport.create({ redis: topology, redisPrefix, kinds: [SHOUT] });
      try {
        const answer = await transport.submit(SHOUT, { text: `start ${start}` }, { deadlineMs: 5_000, requestId: `req-${start}` });
        expect(answer).toEqual({ text: `START ${start}` });
      } finally {
        await transport.close();
      }
    }
  } finally {
    await worker.close();
  }
});
