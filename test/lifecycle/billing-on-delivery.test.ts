/**
 * A call is billed only when its answer can still reach the caller. A slow batch whose caller
 * leaves first (REST: the HTTP request aborted; tool: the MCP request cancelled by a 2025 client
 * or aborted by a 2026-07-28 one, or the client closed) costs nothing and uses no allowance, even after its job has ended, and is counted as
 * `client_gone`; a call answered 200 is billed exactly once. The job of a caller that left stops
 * too, its SMTP session ended early: in process, and over BullMQ (job-cancellations.ts).
 */
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { startMailRig, type MailRig } from '@svc/testkit';
import { call, startServer, type Mode, type TestServer, postBatch } from '../support/servers.ts';
import { connect } from '../mcp/mcp-client.ts';
import { connectAs, MODERN_VERSION } from '../mcp/eras.ts';

const USERS = ['ann@gone.test', 'bob@gone.test'];
/** Banner and each reply 400 ms late, one RCPT at a time: a batch of 2 (and the catch-all probe) takes 2.4 s. */
const SLOW = { bannerDelayMs: 400, replyDelayMs: 400, pipelining: false } as const;
const LEAVE_AFTER_MS = 800;

interface Usage {
  operations: Record<string, { calls: number; billableCalls: number; freeRemaining: number; costUsd: string }>;
}

const MODES: Mode[] = ['embedded', 'distributed'];
/** Per mode, its own mail server (the jobs' end is read from its sessions) and gateway. */
const worlds = new Map<Mode, { rig: MailRig; server: TestServer }>();

beforeAll(async () => {
  for (const [index, mode] of MODES.entries()) {
    const rig = await startMailRig('gone.test', `127.0.0.${83 + 3 * index}`, USERS);
    Object.assign(rig.smtp.script, SLOW);
    const server = await startServer(mode, {
      // No parked session: a job's end is read from the mail server, as its session closing.
      env: { ...rig.env, VERIFY_RESULT_CACHE_TTL_S: '0', FREE_ALLOWANCE_EMAIL_VERIFY_BATCH: '1', VERIFY_SMTP_SESSION_IDLE_MS: '0' },
    });
    worlds.set(mode, { rig, server });
  }
});
afterAll(async () => {
  for (const { rig, server } of worlds.values()) {
    await server.close();
    await rig.close();
  }
});

const usageOf = async (server: TestServer) =>
  ((await call(server, '/v1/usage', { key: server.key })).json() as Usage).operations['email-verify.batch'];

async function clientGoneCount(server: TestServer): Promise<number> {
  const text = (await call({ baseUrl: server.metricsUrl }, '/metrics')).text;
  const line = text
    .split('\n')
    .find((candidate) => /^api_calls_total\{.*operation="email-verify.batch".*outcome="client_gone"/.test(candidate));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/** Waits until the mail server has seen `sessions` sessions and none is open any more: the jobs have ended. */
async function jobsEnded(expect: ExpectStatic, rig: MailRig, sessions: number): Promise<number> {
  const started = Date.now();
  await expect.poll(() => rig.smtp.connections >= sessions && rig.smtp.open === 0, { timeout: 15_000, interval: 50 }).toBe(true);
  return Date.now() - started;
}

const batch = (server: TestServer, signal?: AbortSignal) => postBatch(server, server.key, USERS, signal === undefined ? {} : { signal });

async function restCallerLeaves(expect: ExpectStatic, mode: Mode): Promise<void> {
  const { rig, server } = worlds.get(mode)!;
  const connectionsBefore = rig.smtp.connections;
  const before = await clientGoneCount(server);
  await expect(batch(server, AbortSignal.timeout(LEAVE_AFTER_MS))).rejects.toThrow();
  const endedAfter = await jobsEnded(expect, rig, connectionsBefore + 1);
  // The job stops with its caller, its session ends at once (1.6 s early): in process by the
  // caller's signal, over BullMQ by the cancellation the gateway publishes to the worker.
  expect(endedAfter).toBeLessThan(800);
  await expect.poll(() => clientGoneCount(server)).toBe(before + 1);
  expect(await usageOf(server)).toMatchObject({ calls: 0, billableCalls: 0, freeRemaining: 1, costUsd: '0' });
}

async function toolCallerLeaves(expect: ExpectStatic, mode: Mode): Promise<void> {
  const { rig, server } = worlds.get(mode)!;
  const before = await clientGoneCount(server);
  const connectionsBefore = rig.smtp.connections;

  const cancelling = await connect(server, 'email-verify');
  const cancelled = cancelling.client.callTool({ name: 'email-verify_verify-batch', arguments: { emails: USERS } }, undefined, {
    signal: AbortSignal.timeout(LEAVE_AFTER_MS),
  });
  await expect(cancelled).rejects.toThrow();
  await jobsEnded(expect, rig, connectionsBefore + 1);
  await cancelling.close();

  const closing = await connect(server, 'email-verify');
  const closed = closing.callTool('email-verify_verify-batch', { emails: USERS });
  // The client closes while its job is in its mail session (2.4 s long).
  await expect.poll(() => rig.smtp.connections, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(connectionsBefore + 2);
  await closing.close();
  await expect(closed).rejects.toThrow();
  await jobsEnded(expect, rig, connectionsBefore + 2);

  await expect.poll(() => clientGoneCount(server)).toBe(before + 2);
  expect(await usageOf(server)).toMatchObject({ calls: 0, billableCalls: 0, freeRemaining: 1 });
}

/** A 2026-07-28 client (v2 SDK, pinned; stateless: the call is its HTTP request) aborting its call, as the 2025 clients above cancel theirs. */
async function modernToolCallerLeaves(expect: ExpectStatic, mode: Mode): Promise<void> {
  const { rig, server } = worlds.get(mode)!;
  const before = await clientGoneCount(server);
  const connectionsBefore = rig.smtp.connections;
  const client = await connectAs('v2 pinned 2026-07-28', server, 'email-verify');
  try {
    expect(client.version).toBe(MODERN_VERSION);
    await expect(
      client.callTool('email-verify_verify-batch', { emails: USERS }, undefined, AbortSignal.timeout(LEAVE_AFTER_MS)),
    ).rejects.toThrow();
    const endedAfter = await jobsEnded(expect, rig, connectionsBefore + 1);
    // The job stops with its call, in both modes.
    expect(endedAfter).toBeLessThan(800);
  } finally {
    await client.close();
  }
  await expect.poll(() => clientGoneCount(server)).toBe(before + 1);
  expect(await usageOf(server)).toMatchObject({ calls: 0, billableCalls: 0, freeRemaining: 1 });
}

/** REST, then tool: the first uses the allowance, the second costs the price. */
async function answeredCallsBilledOnce(expect: ExpectStatic, mode: Mode): Promise<void> {
  const { server } = worlds.get(mode)!;
  const rest = await batch(server);
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
  expect(await usageOf(server)).toMatchObject({ calls: 2, billableCalls: 1, freeRemaining: 0, costUsd: '0.15' });
}

// The modes run side by side; within one, the steps run in order (they read one meter). Each test
// asserts with its own `expect`: the global one does not know which of two concurrent tests runs.
describe.concurrent('billing on delivery', () => {
  it.for(MODES)(
    '%s: an aborted REST call, a cancelled tool call (2025 and 2026-07-28 clients) and a client closed mid-call cost nothing (client_gone); answered calls are billed once',
    { timeout: 60_000 },
    async (mode, { expect }) => {
      await restCallerLeaves(expect, mode);
      await toolCallerLeaves(expect, mode);
      await modernToolCallerLeaves(expect, mode);
      await answeredCallsBilledOnce(expect, mode);
    },
  );
});
