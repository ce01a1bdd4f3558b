/**
 * Redis Cluster hash tags (decisions, "Redis topologies"): every key the product writes carries a
 * hash tag, and per-key data is tagged by the key's own id, not by one global tag. The product
 * runs distributed on the test Redis under a prefix of its own, with a real verify-worker process
 * probing a scripted mail world (its cached outcomes in Redis); the key tool issues a key (its record, the key index,
 * its webhook secret), then every synchronous door is used with it and without a valid one (REST
 * and a tool call), and a list is created through the API, and every name under the prefix is
 * read back. The list has a greylisted address, so it waits for its retry (a minute away) while
 * the names are read: its data and the set of unfinished lists the janitor reads are then
 * certainly there (a finished list leaves that set, which then no longer exists).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { qrJobHandler } from '@svc/qr-worker';
import { testRedisUrl } from '@svc/testkit';
import { startMultiRig, waitForStatus, type MultiRig } from '../lists/harness.ts';
import { keysCli, parseCreated, type CreatedKey } from '../callbacks/support.ts';
import { startWorkerProcess, type WorkerProcess } from '../lifecycle/worker-processes.ts';
import { connect } from '../mcp/mcp-client.ts';
import { call, postBatch, startServer, type TestServer } from '../support/servers.ts';

let rig: MultiRig;
let server: TestServer;
let verifyWorker: WorkerProcess;
let redis: Redis;
let created: CreatedKey;

beforeAll(async () => {
  rig = await startMultiRig({
    'tags.test': { host: '127.0.0.51', users: ['ann@tags.test'], mailboxes: { 'grey@tags.test': 'greylist' } },
  });
  // Verify jobs go to the product's own worker process; QR jobs to a worker in this process.
  server = await startServer('distributed', { env: rig.env, handlers: [qrJobHandler] });
  verifyWorker = await startWorkerProcess('verify-worker', 'tags', {
    ...rig.env,
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: server.prefix,
    LOG_LEVEL: 'info',
  });
  redis = createRedis(testRedisUrl(), 'request', 'test-key-tags');
  await waitForRedis(redis, 5_000);
  created = parseCreated((await keysCli(server.prefix)('create', '--name', 'tags')).stdout);
});
afterAll(async () => {
  redis?.disconnect();
  await verifyWorker?.stop();
  await server?.close();
  await rig?.close();
});

async function namesUnder(prefix: string): Promise<string[]> {
  const names: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
    cursor = next;
    names.push(...keys);
  } while (cursor !== '0');
  return names.sort();
}

/** The hash tag Redis Cluster hashes: the first `{...}` with something inside. */
const hashTag = (name: string): string | undefined => /\{([^}]+)\}/.exec(name)?.[1];

describe('keys written in Redis', () => {
  it("every name carries a hash tag, a list's too, and rate-limit budgets, webhook secrets and list ledgers are tagged by their key id", async () => {
    const key = created.key;
    const answers = [
      await call(server, '/v1/qr/qr?data=tags', { key }),
      await call(server, '/v1/qr/wifi?ssid=tags&security=nopass', { key }),
      await call(server, '/v1/email-verify/verify?email=ann%40tags.test', { key }),
      await postBatch(server, key, ['ann@tags.test', 'bob@tags.test', 'not-an-address']),
      await call(server, '/v1/usage', { key }),
      await call(server, '/v1/email-verify/lists', {
        key,
        method: 'POST',
        headers: { 'content-type': 'text/csv' },
        body: 'Name,Email\r\nAnn,ann@tags.test\r\nGrey,grey@tags.test\r\n',
      }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 202]);
    const list = answers[5]!.json() as { id: string };
    // Settled but for the greylisted address, whose retry is a minute away: still unfinished.
    await waitForStatus(server, key, list.id, ['retrying']);
    // Without a valid key the budget is the caller's address.
    expect((await call(server, '/v1/qr/qr?data=tags', { key: 'sk_not_a_key' })).status).toBe(401);
    // A tool call: the gateway counts it for cancellations across replicas while it runs.
    const qr = await connect(server, 'qr', key);
    try {
      expect((await qr.callTool('qr_generate', { data: 'tags' })).isError).toBeFalsy();
    } finally {
      await qr.close();
    }

    // What the verifier learnt is cached in Redis (by a digest of the address).
    const batch = answers[3]!.json() as { results: Array<{ verdict: string }> };
    expect(batch.results.map((result) => result.verdict)).toEqual(['deliverable', 'undeliverable', 'undeliverable']);

    const names = await namesUnder(server.prefix);
    expect(names.filter((name) => name.includes(':verify:outcome:')).length).toBeGreaterThanOrEqual(2);
    const untagged = names.filter((name) => hashTag(name) === undefined);
    expect(untagged).toEqual([]);

    const rateLimits = names.filter((name) => name.includes(':ratelimit:'));
    const keyBudgets = rateLimits.filter((name) => hashTag(name) === created.id);
    expect(keyBudgets.length, rateLimits.join('\n')).toBeGreaterThanOrEqual(4);
    // No budget falls back on a placeholder of the limiter library (a name with "undefined").
    expect(names.filter((name) => name.includes('undefined'))).toEqual([]);
    expect(names.filter((name) => name.includes('webhook-secret')).map(hashTag)).toEqual([created.id]);

    // A list's data is tagged by the list's id; its ledger and its key's index by the key's id
    // (the key's active slots are free again while the list only waits for a retry); the
    // janitor's set of unfinished lists holds this one.
    const listData = names.filter((name) => name.startsWith(`${server.prefix}:list:`));
    expect(listData).toEqual(
      expect.arrayContaining(
        [`:list:{${list.id}}`, `:list:{${list.id}}:results`, `:list:{${list.id}}:retries`].map((name) => server.prefix + name),
      ),
    );
    expect(listData.map(hashTag)).toEqual(listData.map(() => list.id));
    expect(names.filter((name) => name.includes(`:ledger:`)).map(hashTag)).toEqual([created.id]);
    expect(names.filter((name) => name.includes(':lists:key:')).map(hashTag)).toEqual([created.id]);
    const unfinished = names.filter((name) => name.includes('unfinished'));
    expect(unfinished).toHaveLength(1);
    expect(await redis.smembers(unfinished[0]!)).toEqual([list.id]);
  });
});
