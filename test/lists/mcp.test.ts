/**
 * The list tools through the MCP SDK's own client, in both modes: create (free, sharing the
 * REST route's rate limit), status until completed, results a page at a time whose pages add up
 * to the REST results, and errors as `isError` results carrying the contract's error object.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailRig, type MailRig } from '@svc/testkit';
import { call, type Mode } from '../support/servers.ts';
import { createList, startListServer, type ListObjectBody, type ListServer, type ResultBody } from './harness.ts';

let rig: MailRig;
beforeAll(async () => {
  rig = await startMailRig('agents.test', '127.0.0.47', ['ada@agents.test', 'bo@agents.test']);
});
afterAll(async () => rig?.close());

interface Session {
  client: Client;
  lastHeaders: () => Headers;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
}

async function connect(server: ListServer, key: string): Promise<Session> {
  const seen: Response[] = [];
  const client = new Client({ name: 'list-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/api/mcp/email-verify`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        if (init?.method === 'POST') seen.push(response);
        return response;
      },
    }),
  );
  return {
    client,
    lastHeaders: () => seen.at(-1)!.headers,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
  };
}

const errorOf = (result: CallToolResult) => {
  expect(result.isError).toBe(true);
  return JSON.parse((result.content[0] as { text: string }).text) as { error: string; details?: Record<string, unknown> };
};

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: ListServer;
  const sessions: Client[] = [];
  beforeAll(async () => {
    server = await startListServer(mode, { ...rig.env, RATE_LIMIT_EMAIL_VERIFY_LIST: '3' });
  });
  afterAll(async () => {
    for (const client of sessions) await client.close();
    await server?.close();
  });

  it('create, follow and page through a list; the pages add up to the REST results', async () => {
    const key = await server.freshKey();
    const agent = await connect(server, key);
    sessions.push(agent.client);
    const { tools } = await agent.client.listTools();
    for (const name of ['email-verify_list-create', 'email-verify_list-status', 'email-verify_list-results']) {
      const tool = tools.find((candidate) => candidate.name === name)!;
      expect(tool.description?.length).toBeGreaterThan(100);
      expect(tool.outputSchema?.type).toBe('object');
    }

    const emails = ['ada@agents.test', 'nobody@agents.test', 'bo@agents.test', 'ada@agents.test', 'broken'];
    const created = await agent.call('email-verify_list-create', { emails, name: 'from an agent' });
    expect(created.isError).toBeFalsy();
    const list = created.structuredContent as unknown as ListObjectBody;
    expect(list).toMatchObject({ name: 'from an agent', count: 5, distinct: 4, costUsd: '0' });
    expect(created._meta).toEqual({ costUsd: '0', freeRemaining: 10 });
    expect(agent.lastHeaders().get('x-service-cost')).toBe('0');
    expect(agent.lastHeaders().get('x-service-free-remaining')).toBe('10');

    await expect
      .poll(async () => ((await agent.call('email-verify_list-status', { id: list.id })).structuredContent as { status: string }).status, {
        timeout: 15_000,
      })
      .toBe('completed');

    const pages: Array<ResultBody & { position: number }> = [];
    let cursor: string | null | undefined;
    let calls = 0;
    do {
      const page = await agent.call('email-verify_list-results', { id: list.id, limit: 2, ...(cursor === undefined ? {} : { cursor }) });
      expect(page.isError).toBeFalsy();
      const body = page.structuredContent as {
        results: Array<ResultBody & { position: number }>;
        nextCursor: string | null;
        pending: number;
      };
      expect(body.pending).toBe(0);
      pages.push(...body.results);
      cursor = body.nextCursor;
      calls += 1;
    } while (cursor !== null);
    expect(calls).toBe(3);
    expect(pages.map((entry) => entry.position)).toEqual([0, 1, 2, 3, 4]);
    const rest = (await call(server, `/v1/email-verify/lists/${list.id}/results`, { key })).json() as { results: ResultBody[] };
    expect(pages.map(({ position: _position, ...result }) => result)).toEqual(rest.results);
    expect(pages.map((entry) => entry.verdict)).toEqual(['deliverable', 'undeliverable', 'deliverable', 'deliverable', 'undeliverable']);
  });

  it('creates a list from CSV text with its address column; rows without an address have positions but are no entries', async () => {
    const key = await server.freshKey();
    const agent = await connect(server, key);
    sessions.push(agent.client);
    const csv = 'Name;Work;Private\nAda;;ada@agents.test\nNone;;\nBo;x;bo@agents.test\n';
    const created = await agent.call('email-verify_list-create', { csv, column: 3, name: 'csv from an agent' });
    expect(created.structuredContent).toMatchObject({ count: 2, column: { index: 3, header: 'Private' }, encoding: 'utf-8' });
    const id = (created.structuredContent as unknown as ListObjectBody).id;
    await expect
      .poll(async () => ((await agent.call('email-verify_list-status', { id })).structuredContent as { status: string }).status, {
        timeout: 15_000,
      })
      .toBe('completed');
    const first = (await agent.call('email-verify_list-results', { id, limit: 1 })).structuredContent as {
      results: Array<{ position: number }>;
      nextCursor: string | null;
    };
    expect(first.results.map((entry) => entry.position)).toEqual([0]);
    const second = (await agent.call('email-verify_list-results', { id, limit: 1, cursor: first.nextCursor! })).structuredContent as {
      results: Array<{ position: number; email: string }>;
    };
    expect(second.results).toMatchObject([{ position: 2, email: 'bo@agents.test' }]);
    // Refusals, under a key of their own: each counts against the creation rate (3 a minute here).
    const refused = await connect(server, await server.freshKey());
    sessions.push(refused.client);
    expect(errorOf(await refused.call('email-verify_list-create', { csv, column: 'Phone' }))).toMatchObject({
      details: { param: 'column' },
    });
    expect(errorOf(await refused.call('email-verify_list-create', { csv, emails: ['a@b.co'] }))).toMatchObject({
      error: 'invalid_request',
    });
    expect(errorOf(await refused.call('email-verify_list-create', { csv, sheet: 1 }))).toMatchObject({
      message: 'Unknown field `sheet`; the tool takes `emails` (or `csv` and `column`), `name` and `callbackUrl`.',
    });
  });

  it('errors are tool results with the contract’s error object; creation shares the REST rate limit', async () => {
    const key = await server.freshKey();
    const agent = await connect(server, key);
    sessions.push(agent.client);
    expect(errorOf(await agent.call('email-verify_list-status', { id: 'lst_000000000000000000000000' }))).toMatchObject({
      error: 'not_found',
    });
    expect(errorOf(await agent.call('email-verify_list-results', { id: 'lst_x', cursor: 'abc' }))).toMatchObject({
      error: 'invalid_parameter',
      details: { param: 'cursor' },
    });
    // Each refusal names what is wrong in the tool's own terms.
    expect(errorOf(await agent.call('email-verify_list-results', { id: 'lst_x', limit: 501 }))).toMatchObject({
      message: 'limit must be an integer from 1 to 500.',
    });
    expect(errorOf(await agent.call('email-verify_list-status', {}))).toMatchObject({
      details: { param: 'id' },
      message: expect.stringContaining('id is required'),
    });
    expect(errorOf(await agent.call('email-verify_list-create', { emails: ['a@b.co'], callbackUrl: 'http://example.com/' }))).toMatchObject(
      {
        error: 'invalid_parameter',
        details: { param: 'callbackUrl' },
      },
    );
    expect(errorOf(await agent.call('email-verify_list-create', { emails: [] }))).toMatchObject({ error: 'invalid_request' });

    // One budget of 3 creations a minute for both doors: the two refused tool calls above count, a REST call takes the last.
    expect((await createList(server, key, { emails: ['broken'] })).status).toBe(202);
    const limited = await createList(server, key, { emails: ['broken'] });
    expect(limited.status).toBe(429);
    expect(limited.json()).toMatchObject({ error: 'rate_limited' });
    await expect(agent.call('email-verify_list-create', { emails: ['broken'] })).rejects.toThrow(/rate_limited/);
    // Reading is not limited.
    for (let i = 0; i < 5; i += 1)
      expect((await agent.call('email-verify_list-status', { id: 'lst_000000000000000000000000' })).isError).toBe(true);
  });
});
