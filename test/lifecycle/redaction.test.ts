/**
 * No full address and no key in the logs or the job backend. The real processes (`npm start` in
 * embedded mode; the gateway and both workers in distributed mode) run at log level debug while
 * callers verify addresses (REST and tool), send their key as a query parameter, and put a wifi
 * password and an address in QR requests; everything they print is captured and searched. In
 * distributed mode Redis is then searched too: the jobs have left it (payloads deleted when they
 * end) and nothing the job backend keeps, events included, holds an address or a key.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, type Redis } from '@svc/jobs/redis';
import { RedisKeyStore, generateApiKey } from '@svc/gateway';
import {
  dropPrefix,
  spawnNode,
  startMailRig,
  stopProcessTree,
  testRedisUrl,
  uniquePrefix,
  waitUntil,
  type MailRig,
  childEnv,
} from '@svc/testkit';
import { call, postBatch } from '../support/servers.ts';

const ADDRESSES = ['ann@red.test', 'private.person@red.test'];
const WIFI_PASSWORD = 'hunter2hunter2';

interface Captured {
  child: ChildProcess;
  output: () => string;
}

function start(script: string, env: Record<string, string>): Captured {
  const child = spawnNode(script, {
    env: childEnv({ LOG_LEVEL: 'debug', HOST: '127.0.0.1', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** The first JSON log line with this message, once it appears. */
async function logLine(process: Captured, message: string): Promise<{ address?: string }> {
  let found: { msg?: string; address?: string } | undefined;
  await waitUntil(
    () => {
      found = process
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: string; address?: string })
        .find((line) => line.msg === message);
      return found !== undefined;
    },
    30_000,
    message,
  );
  return found!;
}

const listeningAt = async (process: Captured, message: string): Promise<string> => {
  const address = (await logLine(process, message)).address;
  if (address === undefined) throw new Error(`"${message}" without an address`);
  return address;
};

/** Everything a careless deployment would log: addresses in queries and bodies, keys in the query. */
async function exercise(baseUrl: string, key: string): Promise<void> {
  const server = { baseUrl };
  const bad = generateApiKey();
  const results = [
    await call(server, `/v1/email-verify/verify?email=${encodeURIComponent(ADDRESSES[0]!)}`, { key }),
    await postBatch(server, key, ADDRESSES),
    await call(server, `/v1/email-verify/verify?email=${ADDRESSES[1]}&key=${key}`, { key }),
    await call(server, `/v1/qr/qr?data=hello&api_key=${key}`),
    await call(server, `/v1/qr/qr?data=hello&token=${bad}`, { key: bad }),
    await call(server, `/v1/qr/wifi?ssid=home&password=${WIFI_PASSWORD}`, { key }),
    await call(server, `/v1/qr/qr?data=${encodeURIComponent(`mailto:${ADDRESSES[1]}`)}`, { key }),
    await call(server, '/api/mcp/email-verify', {
      key,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'email-verify_verify', arguments: { email: ADDRESSES[1] } },
      }),
    }),
  ];
  expect(results.map((result) => result.status)).toEqual([200, 200, 400, 401, 401, 200, 200, 200]);
}

function expectNothingSecret(text: string, key: string): void {
  for (const secret of [...ADDRESSES, key, WIFI_PASSWORD, 'private.person%40', 'ann%40red']) expect(text).not.toContain(secret);
  expect(text).not.toMatch(/sk_[A-Za-z0-9]{32}/);
}

let rig: MailRig;
beforeAll(async () => {
  rig = await startMailRig('red.test', '127.0.0.85', [ADDRESSES[0]!]);
});
afterAll(async () => rig?.close());

describe('embedded mode (npm start)', () => {
  const key = generateApiKey();
  let gateway: Captured;
  afterAll(async () => {
    if (gateway !== undefined) await stopProcessTree(gateway.child);
  });

  it(
    'logs requests with the verify query and credential-like parameters redacted, and no address or key anywhere',
    { timeout: 60_000 },
    async () => {
      gateway = start('scripts/start.ts', { ...rig.env, PORT: '0', API_KEYS: key, VERIFY_RESULT_CACHE_TTL_S: '0' });
      const address = await listeningAt(gateway, 'listening');
      await exercise(address, key);
      await stopProcessTree(gateway.child);
      const output = gateway.output();
      // Not vacuous: the requests were logged, with their URLs.
      expect(output).toContain('"url":"/v1/email-verify/verify?[redacted]"');
      expect(output).toContain('"url":"/v1/qr/qr?data=[redacted:5c:2cf24dba5fb0]&api_key=[redacted]"');
      expect(output).toContain('"url":"/v1/qr/wifi?ssid=home&password=[redacted]"');
      expectNothingSecret(output, key);
    },
  );
});

describe('distributed mode (gateway and workers)', () => {
  const key = generateApiKey();
  const prefix = uniquePrefix('redaction');
  let redis: Redis;
  const processes: Captured[] = [];
  beforeAll(async () => {
    redis = createRedis(testRedisUrl(), 'blocking', 'redaction-test');
    await new RedisKeyStore(redis, prefix).create('redaction', key);
  });
  afterAll(async () => {
    for (const process of processes) await stopProcessTree(process.child);
    await dropPrefix(testRedisUrl(), prefix);
    redis?.disconnect();
  });

  /** Every value of every key under the prefix, as text (the verifier's result cache aside). */
  async function backendText(): Promise<{ keys: string[]; text: string }> {
    const keys = (await redis.keys(`${prefix}:*`)).filter((name) => !name.startsWith(`${prefix}:verify:result`));
    let text = keys.join('\n');
    for (const name of keys) {
      const type = await redis.type(name);
      if (type === 'string') text += await redis.get(name);
      else if (type === 'hash') text += JSON.stringify(await redis.hgetall(name));
      else if (type === 'list') text += (await redis.lrange(name, 0, -1)).join('\n');
      else if (type === 'set') text += (await redis.smembers(name)).join('\n');
      else if (type === 'zset') text += (await redis.zrange(name, 0, -1)).join('\n');
      else if (type === 'stream') text += JSON.stringify(await redis.xrange(name, '-', '+'));
    }
    return { keys, text };
  }

  it(
    'logs of all three processes hold no address or key; Redis holds no job, address or key once the jobs ended',
    { timeout: 90_000 },
    async () => {
      const env = { ...rig.env, REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, VERIFY_RESULT_CACHE_TTL_S: '0', WORKER_METRICS_PORT: '0' };
      const gateway = start('services/gateway/src/main.ts', { ...env, PORT: '0' });
      processes.push(gateway, start('services/verify-worker/src/main.ts', env), start('services/qr-worker/src/main.ts', env));
      const address = await listeningAt(gateway, 'gateway listening');
      await Promise.all(processes.slice(1).map((worker) => logLine(worker, 'worker started')));
      await exercise(address, key);

      // Jobs end before their answers; their hashes are gone right after.
      const jobHash = new RegExp(`^${prefix}:bull:\\{(verify|qr)\\}:(verify|qr):[0-9a-f-]{36}$`);
      await expect.poll(async () => (await backendText()).keys.filter((name) => jobHash.test(name))).toEqual([]);
      const backend = await backendText();
      // Not vacuous: the event streams of both queues are there, with their completion events.
      expect(backend.keys).toEqual(expect.arrayContaining([`${prefix}:bull:{verify}:verify:events`, `${prefix}:bull:{qr}:qr:events`]));
      expect(backend.text).toContain('completed');
      expectNothingSecret(backend.text, key);

      for (const process of processes) await stopProcessTree(process.child);
      const output = processes.map((process) => process.output()).join('\n');
      expect(output).toContain('"url":"/v1/email-verify/verify?[redacted]"');
      expect(output).toContain('"msg":"job done"');
      expectNothingSecret(output, key);
    },
  );
});
