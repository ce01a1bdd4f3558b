/**
 * Progress of a verify batch: a client that gives a progressToken (the SDKs do when the caller
 * passes `onprogress`) receives `notifications/progress` while the addresses are probed, growing,
 * with the total of distinct addresses, then the result; in both eras. Without a token the answer
 * stays one JSON body, its cost in the headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailRig, type MailRig } from '@svc/testkit';
import { startServer, type TestServer } from '../support/servers.ts';
import { rpc, toolCall } from './mcp-client.ts';
import { connectAs, type ClientKind } from './eras.ts';

let rig: MailRig;
let server: TestServer;
beforeAll(async () => {
  rig = await startMailRig('progress.test', '127.0.0.33', ['ada@progress.test', 'bob@progress.test']);
  server = await startServer('embedded', { env: rig.env });
});
afterAll(async () => {
  await server?.close();
  await rig?.close();
});

const EMAILS = ['ada@progress.test', 'bob@progress.test', 'nobody@progress.test', 'ADA@progress.test', 'not an address'];

describe.each<ClientKind>(['v2 pinned 2026-07-28', 'v2 auto', 'v1'])('%s client', (kind) => {
  it('receives growing progress notifications during a batch, then the result', async () => {
    const client = await connectAs(kind, server, 'email-verify');
    const updates: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool('email-verify_verify-batch', { emails: EMAILS }, (update) => updates.push(update));
    await client.close();
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { count: number }).count).toBe(5);
    expect(result._meta).toMatchObject({ costUsd: expect.any(String) });
    expect(updates.length).toBeGreaterThan(0);
    const total = updates[0]?.total ?? 0;
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(EMAILS.length);
    for (const update of updates) expect(update.total).toBe(total);
    const values = updates.map((update) => update.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    expect(values.at(-1)).toBe(total);
  });
});

it('a 2025 raw call with a progressToken is answered as an event stream, its cost as a trailer', async () => {
  const body = toolCall('email-verify_verify-batch', { emails: EMAILS });
  const response = await rpc(server, 'email-verify', { ...body, params: { ...body.params, _meta: { progressToken: 'p1' } } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events = response.text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as { method?: string; params?: { progress: number }; result?: unknown });
  expect(events.filter((event) => event.method === 'notifications/progress').length).toBeGreaterThan(0);
  expect(events.at(-1)?.result).toBeDefined();
});

it('without a progressToken the answer is one JSON body with the cost header', async () => {
  const response = await rpc(server, 'email-verify', toolCall('email-verify_verify-batch', { emails: EMAILS }));
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('x-service-cost')).not.toBeNull();
});
