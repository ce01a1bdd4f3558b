/**
 * `npm run keys -- revoke ID_OR_NAME` against real Redis and a distributed gateway: the contract's
 * "deleting a key deletes its history" (decisions, "Learning from sends"). A key reports
 * feedback and verifies addresses (a plain domain and a catch-all one, so that every kind of
 * feedback key is written: address state, events, verifications, domain tally, catch-all tally);
 * revoking it leaves nothing under its feedback scope, while another key's history stays whole.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { keysCli } from '../callbacks/support.ts';
import { startMultiRig, type MultiRig } from '../lists/harness.ts';
import { call, startServer, type TestServer } from '../support/servers.ts';

const prefix = uniquePrefix('key-delete');
const keys = keysCli(prefix);

let rig: MultiRig;
let server: TestServer;
let redis: Redis;
beforeAll(async () => {
  rig = await startMultiRig({
    'keep.test': { host: '127.0.0.106', users: ['ann@keep.test'] },
    'any.test': { host: '127.0.0.107', catchAll: true },
  });
  server = await startServer('distributed', { prefix, env: rig.env });
  redis = new Redis(testRedisUrl());
}, 60_000);
afterAll(async () => {
  redis?.disconnect();
  // Its close drops nothing under a prefix it was given: the file's keys go here.
  await server?.close();
  await rig?.close();
  await dropPrefix(testRedisUrl(), prefix);
});

async function scan(pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found.sort();
}

/** A key made by the CLI: the key and its id (from `list`). */
async function created(name: string): Promise<{ key: string; id: string }> {
  const printed = (await keys('create', '--name', name)).stdout;
  const key = /sk_[A-Za-z0-9]{32}/.exec(printed)?.[0];
  const id = /\(id (\S+), name /.exec(printed)?.[1];
  if (key === undefined || id === undefined) throw new Error(`no key ${name} made`);
  return { key, id };
}

/** Reports and verifications of the key: every kind of feedback key gets written. */
async function use(key: string): Promise<void> {
  const reported = await call(server, '/v1/email-verify/feedback', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      events: [
        { email: 'gone@any.test', outcome: 'hard_bounce' },
        { email: 'read@any.test', outcome: 'delivered' },
        { email: 'ann@keep.test', outcome: 'complaint' },
      ],
    }),
  });
  expect(reported.status).toBe(200);
  for (const email of ['maybe@any.test', 'ann@keep.test']) {
    const verified = await call(server, `/v1/email-verify/verify?email=${encodeURIComponent(email)}`, { key });
    expect(verified.status, email).toBe(200);
  }
}

const history = async (key: string, email: string) => call(server, `/v1/email-verify/history?email=${encodeURIComponent(email)}`, { key });

describe('npm run keys -- revoke', () => {
  it('revokes the key and erases its feedback and history; another key keeps its own', async () => {
    const gone = await created('leaving');
    const stays = await created('staying');
    await use(gone.key);
    await use(stays.key);
    const scope = (id: string) => `${prefix}:fb:{${id}}:*`;
    const kinds = (found: string[], id: string) =>
      [...new Set(found.map((name) => name.slice(`${prefix}:fb:{${id}}:`.length).split(':')[0]))].sort();
    expect(kinds(await scan(scope(gone.id)), gone.id), 'every kind of feedback key was written').toEqual(['a', 'd', 'e', 'k', 'v']);
    const before = await scan(scope(stays.id));

    const revoked = await keys('revoke', gone.id);
    expect(revoked.stdout).toContain(`revoked 1 key(s) (${gone.id})`);
    expect(await scan(scope(gone.id)), 'nothing of the key remains under its feedback scope').toEqual([]);
    expect(await scan(`${prefix}:fb:*${gone.id}*`)).toEqual([]);
    expect((await keys('list')).stdout).toMatch(new RegExp(`${gone.id}\\s+leaving\\s.*REVOKED`));
    expect((await history(gone.key, 'gone@any.test')).status, 'the key no longer authenticates').toBe(401);

    expect(await scan(scope(stays.id)), 'the other key keeps its history').toEqual(before);
    const kept = (await history(stays.key, 'ann@keep.test')).json() as { verifications: unknown[]; events: unknown[] };
    expect(kept.verifications).toHaveLength(1);
    expect(kept.events).toHaveLength(1);
  }, 60_000);

  it('by name, every key of that name is revoked and erased', async () => {
    const first = await created('twin');
    const second = await created('twin');
    await use(first.key);
    await use(second.key);
    expect(await scan(`${prefix}:fb:{${first.id}}:*`)).not.toEqual([]);
    const revoked = await keys('revoke', 'twin');
    expect(revoked.stdout).toContain('revoked 2 key(s)');
    expect(await scan(`${prefix}:fb:{${first.id}}:*`)).toEqual([]);
    expect(await scan(`${prefix}:fb:{${second.id}}:*`)).toEqual([]);
    await expect(keys('revoke', 'nobody')).rejects.toMatchObject({ stderr: expect.stringContaining('no key with id or name nobody') });
  }, 60_000);
});
