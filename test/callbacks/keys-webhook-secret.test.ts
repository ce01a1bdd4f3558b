/**
 * The key tool's webhook secrets against Redis (its commands run as its bin runs them, see
 * support.ts): `keys create` prints the key and its secret once and stores the secret where the
 * consumer reads it; `keys webhook-secret` (by name or id) replaces it and prints the new one once;
 * ambiguous, unknown and revoked keys are refused; `keys list` never shows a secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, waitForRedis, type Redis } from '@svc/jobs/redis';
import { dropPrefix, testRedisUrl, uniquePrefix } from '@svc/testkit';
import { WEBHOOK_SECRET_PATTERN, webhookSecretKey } from '@svc/webhooks';
import { keysCli, parseCreated } from './support.ts';

const prefix = uniquePrefix('keys-webhook');
const keys = keysCli(prefix);
let redis: Redis;

beforeAll(async () => {
  redis = createRedis(testRedisUrl(), 'request', 'test');
  await waitForRedis(redis, 5_000);
});
afterAll(async () => {
  redis.disconnect();
  await dropPrefix(testRedisUrl(), prefix);
});

const stored = (keyId: string) => redis.get(webhookSecretKey(prefix, keyId));
const secretsIn = (text: string) => text.match(/whsec_[A-Za-z0-9]{40}/g) ?? [];

describe('keys webhook secrets', () => {
  it('create prints the key and its webhook secret once, and stores the secret under the key id', async () => {
    const { stdout } = await keys('create', '--name', 'globex');
    const created = parseCreated(stdout);
    expect(secretsIn(stdout)).toEqual([created.webhookSecret]);
    expect(created.webhookSecret).toMatch(WEBHOOK_SECRET_PATTERN);
    expect(await stored(created.id)).toBe(created.webhookSecret);
    expect(stdout).toContain('not shown again');

    const listed = (await keys('list')).stdout;
    expect(listed).toContain(created.id);
    expect(secretsIn(listed)).toEqual([]);
  });

  it('webhook-secret NAME or ID replaces the secret and prints the new one once', async () => {
    const created = parseCreated((await keys('create', '--name', 'initech')).stdout);
    const byName = (await keys('webhook-secret', 'initech')).stdout;
    expect(secretsIn(byName)).toHaveLength(1);
    const second = secretsIn(byName)[0]!;
    expect(second).not.toBe(created.webhookSecret);
    expect(await stored(created.id)).toBe(second);

    const byId = (await keys('webhook-secret', created.id)).stdout;
    const third = secretsIn(byId)[0]!;
    expect(third).not.toBe(second);
    expect(await stored(created.id)).toBe(third);
  });

  it('refuses an unknown key, a name shared by two keys, and a revoked key, changing nothing', async () => {
    await expect(keys('webhook-secret', 'nobody')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no key with id or name nobody'),
    });

    const [one, two] = [
      parseCreated((await keys('create', '--name', 'twin')).stdout),
      parseCreated((await keys('create', '--name', 'twin')).stdout),
    ];
    await expect(keys('webhook-secret', 'twin')).rejects.toMatchObject({
      stderr: expect.stringContaining('2 keys are named twin: give the id'),
    });
    expect(await stored(one.id)).toBe(one.webhookSecret);
    await keys('webhook-secret', two.id);
    expect(await stored(one.id)).toBe(one.webhookSecret);

    const revoked = parseCreated((await keys('create', '--name', 'gone')).stdout);
    await keys('revoke', 'gone');
    await expect(keys('webhook-secret', 'gone')).rejects.toMatchObject({ stderr: expect.stringContaining(`key ${revoked.id} is revoked`) });
    expect(await stored(revoked.id)).toBe(revoked.webhookSecret);
  }, 60_000);

  it('the usage names the new command', async () => {
    await expect(keys('frobnicate')).rejects.toMatchObject({ stderr: expect.stringContaining('webhook-secret ID_OR_NAME') });
  });
});
