/**
 * Tool-call cancellation behind two gateway replicas: a load balancer sends the client's
 * `notifications/cancelled` to one replica and the call it names is held by the other. The call
 * is still closed there and costs nothing (client_gone); a cancellation naming no call in flight
 * changes nothing.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '@svc/gateway';
import { dropPrefix, startMailRig, testRedisUrl, uniquePrefix, type MailRig } from '@svc/testkit';
import { call, startServer, type TestServer } from '../support/servers.ts';

const USERS = ['ann@relay.test', 'bob@relay.test'];
/** Banner and each reply 400 ms late, one RCPT at a time: a batch of 2 (and the catch-all probe) takes about 2.4 s. */
const SLOW = { bannerDelayMs: 400, replyDelayMs: 400, pipelining: false } as const;

let rig: MailRig;
let one: TestServer;
let two: TestServer;
const prefix = uniquePrefix('cancel-relay');

beforeAll(async () => {
  rig = await startMailRig('relay.test', '127.0.0.93', USERS);
  Object.assign(rig.smtp.script, SLOW);
  const key = generateApiKey();
  const env = { ...rig.env, VERIFY_RESULT_CACHE_TTL_S: '0', FREE_ALLOWANCE_EMAIL_VERIFY_BATCH: '0', RATE_LIMIT_EMAIL_VERIFY_BATCH: '0' };
  one = await startServer('distributed', { prefix, key, env });
  two = await startServer('distributed', { prefix, key, env, workers: false });
});
afterAll(async () => {
  await one?.close();
  await two?.close();
  await rig?.close();
  await dropPrefix(testRedisUrl(), prefix);
});

/** An SDK client whose cancellations a load balancer sends to `two`, and everything else to `one`. */
async function clientBehindBalancer(): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${one.baseUrl}/api/mcp/email-verify`), {
    requestInit: { headers: { Authorization: `Bearer ${one.key}` } },
    fetch: (url, init) => {
      const cancellation = typeof init?.body === 'string' && init.body.includes('notifications/cancelled');
      return fetch(cancellation ? String(url).replace(one.baseUrl, two.baseUrl) : url, init);
    },
  });
  const client = new Client({ name: 'balanced-agent', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function clientGone(server: TestServer): Promise<number> {
  const line = (await call({ baseUrl: server.metricsUrl }, '/metrics')).text
    .split('\n')
    .find((candidate) => /^api_calls_total\{.*operation="email-verify.batch".*outcome="client_gone"/.test(candidate));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

const usage = async () =>
  ((await call(one, '/v1/usage', { key: one.key })).json() as { operations: Record<string, { calls: number; billableCalls: number }> })
    .operations['email-verify.batch'];

describe('a tool call cancelled through another replica', () => {
  it('is closed on the replica that holds it and not billed; a cancellation naming no call in flight changes nothing', async () => {
    const client = await clientBehindBalancer();
    try {
      const sessionsBefore = rig.smtp.connections;
      const cancelled = client.callTool({ name: 'email-verify_verify-batch', arguments: { emails: USERS } }, undefined, {
        signal: AbortSignal.timeout(800),
      });
      await expect(cancelled).rejects.toThrow();
      await expect.poll(() => clientGone(one), { timeout: 1_500, interval: 50 }).toBe(1);
      // Its job ran to its end (over BullMQ a running job is not interrupted): still not billed.
      await expect.poll(() => rig.smtp.connections > sessionsBefore && rig.smtp.open === 0, { timeout: 15_000, interval: 50 }).toBe(true);
      expect(await usage()).toMatchObject({ calls: 0, billableCalls: 0 });

      // A cancellation of an id nobody has in flight: the next call is answered and billed.
      await client.notification({ method: 'notifications/cancelled', params: { requestId: 999 } });
      const answered = await client.callTool({ name: 'email-verify_verify-batch', arguments: { emails: USERS } });
      expect(answered.isError).toBeFalsy();
      expect(await usage()).toMatchObject({ calls: 1, billableCalls: 1 });
      expect(await clientGone(one)).toBe(1);
    } finally {
      await client.close();
    }
  }, 30_000);
});
