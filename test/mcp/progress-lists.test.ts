/**
 * Progress and cancellation of `email-verify_list-create`, with the real SDK clients of both eras,
 * in both modes: a client that gives a progressToken receives `notifications/progress` while a
 * large payload's rows are read and stored (growing, with the total of rows, throttled to about
 * four a second, the last saying done), then the list; without a token the answer is one JSON
 * body. A call cancelled by its client (`notifications/cancelled`) or dropped (the connection
 * closed) while its rows are read creates no list, so nothing is ever billed for it.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Mode } from '../support/servers.ts';
import { startListServer, startMultiRig, type ListObjectBody, type ListServer, type MultiRig } from '../lists/harness.ts';
import { connectAs, type ClientKind } from './eras.ts';
import { toolCall } from './mcp-client.ts';

/**
 * As many rows as a tool request holds: it is limited to 64 KiB (BODY_LIMIT_BYTES; large files go
 * by REST), so short addresses at a short domain.
 */
const ROWS = 4_000;
/** A CSV export: a header and a row per contact. */
const CSV = ['email', ...Array.from({ length: ROWS }, (_, i) => `c${i}@lp.test`)].join('\n');
const EMAILS = Array.from({ length: ROWS }, (_, i) => `e${i}@lp.test`);

type Update = { progress: number; total?: number; at: number };

let rig: MultiRig;
beforeAll(async () => {
  // One RCPT at a time, slowly: the workers barely start on a list before the test cancels it.
  rig = await startMultiRig({
    'lp.test': { host: '127.0.0.35', users: [], catchAll: false, pipelining: false, replyDelayMs: 200 },
  });
});
afterAll(async () => rig?.close());

/** The progress a call received: growing, one total, the last saying done, at most about four a second. */
function expectRowProgress(updates: Update[], total: number, started: number, answeredAt: number): void {
  expect(updates.length).toBeGreaterThanOrEqual(2);
  for (const update of updates) expect(update.total).toBe(total);
  const values = updates.map((update) => update.progress);
  expect(values).toEqual([...values].sort((a, b) => a - b));
  expect(new Set(values).size).toBe(values.length);
  expect(values[0]).toBeLessThan(total);
  expect(values.at(-1)).toBe(total);
  // The first at once, then one per 250 ms at most, and the end: never one per row.
  expect(updates.length).toBeLessThanOrEqual(Math.floor((answeredAt - started) / 250) + 3);
}

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: ListServer;
  beforeAll(async () => {
    server = await startListServer(mode, {
      ...rig.env,
      LIST_RETRY_DELAYS_S: '',
      RATE_LIMIT_EMAIL_VERIFY_LIST: '0',
      LIST_MAX_ACTIVE_PER_KEY: '1',
    });
  }, 60_000);
  afterAll(async () => server?.close());

  /** The key's lists, as REST lists them. */
  const listsOf = async (key: string): Promise<ListObjectBody[]> => {
    const response = await call(server, '/v1/email-verify/lists', { key });
    expect(response.status).toBe(200);
    return (response.json() as { lists: ListObjectBody[] }).lists;
  };

  /** Creates the list through `kind`'s client, following its progress; cancels it after (the workers need not verify it). */
  async function createFollowed(kind: ClientKind, key: string, args: Record<string, unknown>) {
    const client = await connectAs(kind, { baseUrl: server.baseUrl, key }, 'email-verify');
    const updates: Update[] = [];
    const started = Date.now();
    try {
      const result = await client.callTool('email-verify_list-create', args, (update) => updates.push({ ...update, at: Date.now() }));
      const answeredAt = Date.now();
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      const list = result.structuredContent as unknown as ListObjectBody;
      const cancelled = await client.callTool('email-verify_list-cancel', { id: list.id });
      expect(cancelled.isError).toBeFalsy();
      return { list, updates, started, answeredAt };
    } finally {
      await client.close();
    }
  }

  describe.each<ClientKind>(['v2 pinned 2026-07-28', 'v1'])('%s client', (kind) => {
    it(`receives growing progress while a ${ROWS}-row CSV is read and stored, then the list`, async () => {
      const key = await server.freshKey();
      const { list, updates, started, answeredAt } = await createFollowed(kind, key, { csv: CSV, name: 'export' });
      expect(list).toMatchObject({ count: ROWS, name: 'export' });
      expectRowProgress(updates, ROWS, started, answeredAt);
    }, 60_000);
  });

  it(`reports the rows of ${ROWS} \`emails\` as progress too`, async () => {
    const key = await server.freshKey();
    const { list, updates, started, answeredAt } = await createFollowed('v2 pinned 2026-07-28', key, { emails: EMAILS });
    expect(list).toMatchObject({ count: ROWS });
    expectRowProgress(updates, ROWS, started, answeredAt);
  }, 60_000);

  it('without a progressToken sends no notification: the answer is one JSON body', async () => {
    const key = await server.freshKey();
    const response = await call(server, '/api/mcp/email-verify', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(toolCall('email-verify_list-create', { csv: CSV })),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const answer = response.json() as { result: CallToolResult };
    expect(answer.result.isError).toBeFalsy();
    const [list] = await listsOf(key);
    expect(list?.count).toBe(ROWS);
    const cancel = await call(server, `/v1/email-verify/lists/${list?.id ?? ''}`, { key, method: 'DELETE' });
    expect(cancel.status).toBe(200);
  }, 60_000);

  it('a call its client cancels while the rows are read creates no list and bills nothing', async () => {
    const key = await server.freshKey();
    const client = await connectAs('v2 pinned 2026-07-28', { baseUrl: server.baseUrl, key }, 'email-verify');
    const abort = new AbortController();
    const updates: number[] = [];
    try {
      const calling = client.callTool(
        'email-verify_list-create',
        { csv: CSV },
        (update) => {
          updates.push(update.progress);
          abort.abort();
        },
        abort.signal,
      );
      await expect(calling).rejects.toThrow();
    } finally {
      await client.close();
    }
    expect(updates.length).toBeGreaterThan(0);
    await expectNoListKept(key);
  }, 60_000);

  it('a call whose connection drops while the rows are read creates no list and bills nothing', async () => {
    const key = await server.freshKey();
    const body = toolCall('email-verify_list-create', { csv: CSV });
    const abort = new AbortController();
    const response = await fetch(`${server.baseUrl}/api/mcp/email-verify`, {
      method: 'POST',
      signal: abort.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ ...body, params: { ...body.params, _meta: { progressToken: 'drop' } } }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // Read until the first progress notification, then hang up as a client that crashed does.
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!seen.includes('notifications/progress')) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value instanceof Uint8Array) seen += decoder.decode(value, { stream: true });
    }
    expect(seen).toContain('notifications/progress');
    abort.abort();
    await reader.cancel().catch(() => undefined);
    await expectNoListKept(key);
  }, 60_000);

  /**
   * The call stopped: the key has no list, or (the caller left in the instant the list was being
   * stored) one cancelled before any address was processed; nothing is billed, and the key's one
   * active-list slot is free again.
   */
  async function expectNoListKept(key: string): Promise<void> {
    // The call holds the key's one active-list slot from its start until it ends (list-service.ts
    // `reserve`), and a list it stored and kept would hold it after: another list is accepted only
    // once the call has stopped without one.
    const createAnother = () =>
      call(server, '/v1/email-verify/lists', {
        key,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ emails: ['one@lp.test'] }),
      });
    let again = await createAnother();
    await expect
      .poll(
        async () => {
          if (again.status !== 202) again = await createAnother();
          return again.status;
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe(202);
    // Cancelled at once: nothing of it is probed nor billed either.
    const created = again.json() as ListObjectBody;
    await call(server, `/v1/email-verify/lists/${created.id}`, { key, method: 'DELETE' });
    for (const list of await listsOf(key)) expect(list).toMatchObject({ status: 'cancelled', processed: 0, costUsd: '0' });
    const usage = (await call(server, '/v1/usage', { key })).json() as {
      operations: Record<string, { calls: number; costUsd: string }>;
      totalCostUsd: string;
    };
    expect(usage.operations['email-verify.list']).toMatchObject({ calls: 0, costUsd: '0' });
    expect(usage.totalCostUsd).toBe('0');
  }
});
