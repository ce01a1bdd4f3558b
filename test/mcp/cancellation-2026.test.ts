/**
 * A 2026-07-28 client cancelling a tool call: the v2 SDK client pinned to 2026-07-28 aborts its
 * request mid-batch (stateless: the call is its HTTP request). As with the 2025 clients
 * (test/lifecycle/billing-on-delivery.test.ts): the call costs nothing and uses no allowance, it
 * is counted `client_gone`, and in embedded mode its job stops with it (its mail session ends
 * at once); over BullMQ a running job runs to its end, still unbilled. A call answered after it
 * is billed, so the meter is seen to count.
 */
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { startMailRig, type MailRig } from '@svc/testkit';
import { call, startServer, type Mode, type TestServer } from '../support/servers.ts';
import { connectAs, MODERN_VERSION } from './eras.ts';

const USERS = ['ann@gone26.test', 'bob@gone26.test'];
/** Banner and each reply 400 ms late, one RCPT at a time: a batch of 2 (and the catch-all probe) takes 2.4 s. */
const SLOW = { bannerDelayMs: 400, replyDelayMs: 400, pipelining: false } as const;
const LEAVE_AFTER_MS = 800;
const MODES: Mode[] = ['embedded', 'distributed'];
const worlds = new Map<Mode, { rig: MailRig; server: TestServer }>();

beforeAll(async () => {
  for (const [index, mode] of MODES.entries()) {
    const rig = await startMailRig('gone26.test', `127.0.0.${35 + index}`, USERS);
    Object.assign(rig.smtp.script, SLOW);
    const server = await startServer(mode, { env: { ...rig.env, VERIFY_RESULT_CACHE_TTL_S: '0', FREE_ALLOWANCE_EMAIL_VERIFY_BATCH: '1' } });
    worlds.set(mode, { rig, server });
  }
});
afterAll(async () => {
  for (const { rig, server } of worlds.values()) {
    await server.close();
    await rig.close();
  }
});

interface Usage {
  operations: Record<string, { calls: number; billableCalls: number; freeRemaining: number; costUsd: string }>;
}
const usageOf = async (server: TestServer) =>
  ((await call(server, '/v1/usage', { key: server.key })).json() as Usage).operations['email-verify.batch'];

async function clientGoneCount(server: TestServer): Promise<number> {
  const line = (await call({ baseUrl: server.metricsUrl }, '/metrics')).text
    .split('\n')
    .find((candidate) => /^api_calls_total\{.*operation="email-verify.batch".*outcome="client_gone"/.test(candidate));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

async function cancelledCall(expect: ExpectStatic, mode: Mode): Promise<void> {
  const { rig, server } = worlds.get(mode)!;
  const client = await connectAs('v2 pinned 2026-07-28', server, 'email-verify');
  try {
    expect(client.version).toBe(MODERN_VERSION);
    const sessionsBefore = rig.smtp.connections;
    const goneBefore = await clientGoneCount(server);
    const leaving = AbortSignal.timeout(LEAVE_AFTER_MS);
    await expect(client.callTool('email-verify_verify-batch', { emails: USERS }, undefined, leaving)).rejects.toThrow();
    // The job had begun its mail session when the call was cancelled.
    expect(rig.smtp.connections).toBeGreaterThan(sessionsBefore);
    const cancelledAt = Date.now();
    await expect.poll(() => rig.smtp.open === 0, { timeout: 15_000, interval: 20 }).toBe(true);
    // In process the job is cancelled with its call: its session, 1.6 s from its end, ends at once.
    if (mode === 'embedded') expect(Date.now() - cancelledAt).toBeLessThan(800);
    await expect.poll(() => clientGoneCount(server)).toBe(goneBefore + 1);
    expect(await usageOf(server)).toMatchObject({ calls: 0, billableCalls: 0, freeRemaining: 1, costUsd: '0' });

    const answered = await client.callTool('email-verify_verify-batch', { emails: USERS });
    expect(answered.isError).toBeFalsy();
    expect(await usageOf(server)).toMatchObject({ calls: 1, billableCalls: 0, freeRemaining: 0 });
  } finally {
    await client.close();
  }
}

// The modes run side by side, each with its own mail server and gateway; each test asserts with its own `expect`.
describe.concurrent('a 2026-07-28 client cancels a tool call', () => {
  it.for(MODES)(
    '%s: the call costs nothing and is counted client_gone; in process its job stops at once',
    { timeout: 60_000 },
    async (mode, { expect }) => {
      await cancelledCall(expect, mode);
    },
  );
});
