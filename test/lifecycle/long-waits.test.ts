/**
 * Connections live as long as their request's deadline (not a 10 s idle timeout), in both modes
 * and through both doors: a verify batch against a slow but honest mail server takes over 12 s
 * and is answered 200; a request nobody can serve is answered 504 at its deadline, past 10 s, on
 * the same connection (for a tool call, the tool result with the `timeout` error). Slow clients
 * are still cut: a header section that does not arrive within 10 s is answered 408 and closed.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QR_JOB } from '@svc/contracts';
import { registerHandler } from '@svc/jobs';
import { startMailRig, type MailRig } from '@svc/testkit';
import { call, startServer, type Mode, type TestServer, postBatch } from '../support/servers.ts';
import { connect, toolError } from '../mcp/mcp-client.ts';

const USERS = ['ann@slow.test', 'bob@slow.test', 'cat@slow.test'];
/**
 * Each of banner, EHLO, MAIL and 4 RCPTs (3 users and the catch-all probe), one at a time: 12 s in
 * all, past the 10 s that bounds a request's headers (HEADERS_TIMEOUT_MS, left at its default).
 */
const SLOW = { bannerDelayMs: 3_000, replyDelayMs: 1_500, pipelining: false } as const;
const EXPECTED_MIN_MS = 3_000 + 1_500 * (2 + USERS.length + 1);
const NO_WORKER_DEADLINE_MS = 12_000;
/**
 * A body's allowance on the gateway that takes the dripped bodies (REQUEST_BODY_TIMEOUT_MS; 30 s
 * by default): short, so that a list upload dripped past it shows the list's own allowance in
 * seconds rather than half a minute.
 */
const BODY_TIMEOUT_MS = 4_000;
const DRIP_EVERY_MS = 600;

/** A QR worker that never answers (it stops only when its job's deadline aborts it). */
const silentQr = registerHandler(
  QR_JOB,
  (_payload, context) =>
    new Promise((_resolve, reject) => context.signal.addEventListener('abort', () => reject(new Error('gave up')), { once: true })),
);

const MODES: Mode[] = ['embedded', 'distributed'];
let rig: MailRig;
/** Per mode: a gateway probing the slow mail server, and one whose QR jobs nobody serves. */
const slow = new Map<Mode, TestServer>();
const idle = new Map<Mode, TestServer>();

// Everything runs at once: the waits are the point, and they overlap (vitest runs at most five
// tests of a file concurrently, so each test makes its calls side by side).
beforeAll(async () => {
  rig = await startMailRig('slow.test', '127.0.0.81', USERS);
  Object.assign(rig.smtp.script, SLOW);
  for (const mode of MODES) {
    // The verifier on this branch reads the greeting within the connect timeout (default 5 s):
    // 10 s lets the 3 s greeting pause through with room on a loaded machine, whichever timeout ends up bounding it.
    slow.set(mode, await startServer(mode, { env: { ...rig.env, VERIFY_RESULT_CACHE_TTL_S: '0', VERIFY_CONNECT_TIMEOUT_MS: '10000' } }));
    // Distributed: no worker at all; embedded: a worker that never answers.
    idle.set(
      mode,
      await startServer(mode, {
        workers: false,
        handlers: [silentQr],
        env: { REQUEST_DEADLINE_MS: String(NO_WORKER_DEADLINE_MS), REQUEST_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) },
      }),
    );
  }
});
afterAll(async () => {
  for (const server of [...slow.values(), ...idle.values()]) await server.close();
  await rig?.close();
});

async function restBatch(mode: Mode): Promise<void> {
  const server = slow.get(mode)!;
  const started = Date.now();
  const response = await postBatch(server, server.key, USERS);
  const elapsed = Date.now() - started;
  expect(response.status).toBe(200);
  const body = response.json() as { results: Array<{ email: string; verdict: string; reason: string }> };
  expect(body.results.map((result) => [result.email, result.verdict, result.reason])).toEqual(
    USERS.map((email) => [email, 'deliverable', 'accepted_email']),
  );
  expect(elapsed).toBeGreaterThanOrEqual(EXPECTED_MIN_MS);
  console.log(`[long-waits] ${mode} REST batch answered 200 after ${elapsed} ms`);
}

async function toolBatch(mode: Mode): Promise<void> {
  const client = await connect(slow.get(mode)!, 'email-verify');
  try {
    const started = Date.now();
    const result = await client.callTool('email-verify_verify-batch', { emails: USERS });
    const elapsed = Date.now() - started;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ count: 3, summary: { deliverable: 3, risky: 0, undeliverable: 0 } });
    expect(elapsed).toBeGreaterThanOrEqual(EXPECTED_MIN_MS);
    console.log(`[long-waits] ${mode} tool batch answered after ${elapsed} ms`);
  } finally {
    await client.close();
  }
}

async function restTimeout(mode: Mode): Promise<void> {
  const server = idle.get(mode)!;
  const started = Date.now();
  const response = await call(server, '/v1/qr/qr?data=nobody', { key: server.key });
  expect(Date.now() - started).toBeGreaterThanOrEqual(NO_WORKER_DEADLINE_MS - 50);
  expect(response.status).toBe(504);
  expect(response.json()).toEqual({ error: 'timeout', message: expect.any(String) });
  expect(response.headers.get('x-service-cost')).toBe('0');
  expect(response.headers.get('x-request-id')).toBeTruthy();
}

async function toolTimeout(mode: Mode): Promise<void> {
  const client = await connect(idle.get(mode)!, 'qr');
  try {
    const started = Date.now();
    const result = await client.callTool('qr_generate', { data: 'nobody' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(NO_WORKER_DEADLINE_MS - 50);
    expect(toolError(result)).toEqual({ error: 'timeout', message: expect.any(String) });
  } finally {
    await client.close();
  }
}

/** Headers dripped one every 2 s, never finished: answered 408 in the error format at 10 s, and closed. */
async function slowloris(mode: Mode): Promise<void> {
  const { port, hostname } = new URL(idle.get(mode)!.baseUrl);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
  const started = Date.now();
  socket.write('GET /v1/qr/qr?data=slow HTTP/1.1\r\nHost: x\r\n');
  const drip = setInterval(() => socket.write(`X-Drip-${Date.now()}: 1\r\n`), 2_000);
  const closedAt = await closed;
  clearInterval(drip);
  expect(closedAt - started).toBeGreaterThanOrEqual(9_500);
  const [head, body] = received.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 408 /);
  expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
  expect(JSON.parse(body ?? '')).toEqual({ error: 'request_timeout', message: expect.any(String) });
}

/**
 * A body dripped a part every `everyMs`, then finished (or not): the raw answer and when it came.
 * A batch body still arriving after REQUEST_BODY_TIMEOUT_MS is cut with 408; a list upload may take
 * minutes (a slow uplink).
 */
async function dripBody(path: string, type: string, parts: string[], everyMs: number, finish: boolean) {
  const server = idle.get('embedded')!;
  const { port, hostname } = new URL(server.baseUrl);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  let answeredAt: number | undefined;
  const answered = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      if (/\r\n\r\n\{.*\}/s.test(received)) {
        answeredAt ??= Date.now();
        resolve();
      }
    });
    socket.on('close', () => resolve());
  });
  socket.on('error', () => undefined);
  const length = parts.reduce((sum, part) => sum + Buffer.byteLength(part), 0) + (finish ? 0 : 1);
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`,
  );
  const started = Date.now();
  for (const part of parts) {
    if (socket.destroyed || answeredAt !== undefined) break;
    socket.write(part);
    // Pacing kept on purpose: a body arriving over real time is what the allowances (timers in the gateway process) are tested on.
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  await answered;
  socket.destroy();
  return { head: received.split('\r\n\r\n')[0] ?? '', elapsedMs: (answeredAt ?? Date.now()) - started };
}

describe.concurrent('a body may take as long as its route allows', () => {
  it('a list upload dripped past the body allowance is taken; a batch body still arriving then is answered 408', async () => {
    const rows = ['email\n', ...Array.from({ length: 12 }, (_, i) => `late${i}@slow.test\n`)];
    const batch = ['{"emails":["a@slow.test"', ...Array.from({ length: 12 }, () => ',"b@slow.test"')];
    const [list, cut] = await Promise.all([
      dripBody('/v1/email-verify/lists', 'text/csv', rows, DRIP_EVERY_MS, true),
      dripBody('/v1/email-verify/verify/batch', 'application/json', batch, DRIP_EVERY_MS, false),
    ]);
    expect(list.head).toMatch(/^HTTP\/1\.1 202 /);
    expect(list.elapsedMs).toBeGreaterThan(BODY_TIMEOUT_MS + 2 * DRIP_EVERY_MS);
    expect(cut.head).toMatch(/^HTTP\/1\.1 408 /);
    expect(cut.elapsedMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
    // Well before the list allowance: the body allowance of any other body, with room for a loaded machine.
    expect(cut.elapsedMs).toBeLessThan(BODY_TIMEOUT_MS + 4_000);
  });
});

describe.concurrent('connections live as long as their deadline', () => {
  it.each(MODES)(
    `%s: a batch against a slow mail server is answered 200 after more than ${EXPECTED_MIN_MS / 1000} s, by REST and by tool`,
    { timeout: 45_000 },
    async (mode) => {
      await Promise.all([restBatch(mode), toolBatch(mode)]);
    },
  );

  it.each(MODES)(
    '%s: a job nobody serves is answered 504 at its deadline past 10 s (REST, tool); a slow client is still cut at 10 s',
    { timeout: 30_000 },
    async (mode) => {
      await Promise.all([restTimeout(mode), toolTimeout(mode), slowloris(mode)]);
    },
  );
});
