/**
 * A call is billed only when its answer can still reach the caller. A slow batch whose caller
 * leaves first (REST: the HTTP request aborted; tool: the MCP request cancelled, or the client
 * closed) costs nothing and uses no allowance, even after its job has ended, and is counted as
 * `client_gone`; a call answered 200 is billed exactly once. Embedded mode also cancels the job
 * of a caller that left (its SMTP session ends early).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailRig, type MailRig } from '@svc/testkit';
import { call, startServer, type Mode, type TestServer } from '../support/servers.ts';
import { connect } from '../mcp/mcp-client.ts';

const USERS = ['ann@gone.test', 'bob@gone.test'];
/** Banner and each reply 400 ms late, one RCPT at a time: a batch of 2 (and the catch-all probe) takes 2.4 s. */
const SLOW = { bannerDelayMs: 400, replyDelayMs: 400, pipelining: false } as const;
const LEAVE_AFTER_MS = 800;

interface Usage {
  operations: Record<string, { calls: number; billableCalls: number; freeRemaining: number; costUsd: string }>;
}

let rig: MailRig;
beforeAll(async () => {
  rig = await startMailRig('gone.test', '127.0.0.83', USERS);
  Object.assign(rig.smtp.script, SLOW);
});
afterAll(async () => rig?.close());

const usageOf = async (server: TestServer, key: string) =>
  ((await call(server, '/v1/usage', { key })).json() as Usage).operations['email-verify.batch'];

async function clientGoneCount(server: TestServer): Promise<number> {
  const text = (await call(server, '/metrics')).text;
  const line = text
    .split('\n')
    .find((candidate) => /^api_calls_total\{.*operation="email-verify.batch".*outcome="client_gone"/.test(candidate));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/** Waits until the mail server has seen `sessions` sessions and none is open any more: the jobs have ended. */
async function jobsEnded(sessions: number): Promise<number> {
  const started = Date.now();
  await expect.poll(() => rig.smtp.connections >= sessions && rig.smtp.open === 0, { timeout: 15_000, interval: 50 }).toBe(true);
  return Date.now() - started;
}

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(mode, {
      env: { ...rig.env, VERIFY_RESULT_CACHE_TTL_S: '0', FREE_ALLOWANCE_EMAIL_VERIFY_BATCH: '1' },
    });
  });
  afterAll(async () => server?.close());

  const batch = (signal?: AbortSignal) =>
    call(server, '/v1/email-verify/verify/batch', {
      key: server.key,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ emails: USERS }),
      ...(signal === undefined ? {} : { signal }),
    });

  it('REST: a caller that aborts is not billed, uses no allowance, and counts as client_gone', { timeout: 30_000 }, async () => {
    const connectionsBefore = rig.smtp.connections;
    const before = await clientGoneCount(server);
    const aborted = batch(AbortSignal.timeout(LEAVE_AFTER_MS));
    await expect(aborted).rejects.toThrow();
    const endedAfter = await jobsEnded(connectionsBefore + 1);
    // In process the job is cancelled with its caller (its session ends at once, 1.6 s early);
    // over BullMQ a running job runs to its end.
    if (mode === 'embedded') expect(endedAfter).toBeLessThan(800);
    await expect.poll(() => clientGoneCount(server)).toBe(before + 1);
    expect(await usageOf(server, server.key)).toMatchObject({ calls: 0, billableCalls: 0, freeRemaining: 1, costUsd: '0' });
  });

  it('tool: a cancelled call and a client that closes mid-call are not billed either', { timeout: 30_000 }, async () => {
    const before = await clientGoneCount(server);

    const cancelling = await connect(server, 'email-verify');
    const connectionsBefore = rig.smtp.connections;
    const cancelled = cancelling.client.callTool({ name: 'email-verify_verify-batch', arguments: { emails: USERS } }, undefined, {
      signal: AbortSignal.timeout(LEAVE_AFTER_MS),
    });
    await expect(cancelled).rejects.toThrow();
    await jobsEnded(connectionsBefore + 1);
    await cancelling.close();

    const closing = await connect(server, 'email-verify');
    const closed = closing.callTool('email-verify_verify-batch', { emails: USERS });
    await new Promise((resolve) => setTimeout(resolve, LEAVE_AFTER_MS));
    await closing.close();
    await expect(closed).rejects.toThrow();
    await jobsEnded(connectionsBefore + 2);

    await expect.poll(() => clientGoneCount(server)).toBe(before + 2);
    expect(await usageOf(server, server.key)).toMatchObject({ calls: 0, billableCalls: 0, freeRemaining: 1 });
  });

  it(
    'a call answered 200 is billed exactly once (REST, then tool: the first uses the allowance, the second costs the price)',
    { timeout: 30_000 },
    async () => {
      const rest = await batch();
      expect(rest.status).toBe(200);
      expect(rest.headers.get('x-service-cost')).toBe('0');
      expect(rest.headers.get('x-service-free-remaining')).toBe('0');
      const tools = await connect(server, 'email-verify');
      try {
        const result = await tools.callTool('email-verify_verify-batch', { emails: USERS });
        expect(result.isError).toBeFalsy();
        expect(result._meta).toEqual({ costUsd: '0.15', freeRemaining: 0 });
      } finally {
        await tools.close();
      }
      expect(await usageOf(server, server.key)).toEqual({ calls: 2, billableCalls: 1, freeRemaining: 0, costUsd: '0.15' });
    },
  );
});
