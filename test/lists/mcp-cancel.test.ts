/**
 * `email-verify_list-cancel` through the MCP SDK's own client, in both modes: the semantics of
 * `DELETE /v1/email-verify/lists/{id}`. A running list stops (nothing more probed nor billed, the
 * end callback says `list.cancelled`), the tool answers the list object the REST API then shows,
 * a list that ended is answered as it is, and another key's list is `not_found`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Mode } from '../support/servers.ts';
import { connect, toolError, type Connected } from '../mcp/mcp-client.ts';
import { getList, rcptCounts, startListServer, startMultiRig, type ListObjectBody, type ListServer, type MultiRig } from './harness.ts';

let rig: MultiRig;
beforeAll(async () => {
  rig = await startMultiRig({
    // One RCPT at a time, 100 ms each: a list of these is still running when it is cancelled.
    'slow.test': { host: '127.0.0.43', users: [], catchAll: false, pipelining: false, replyDelayMs: 100 },
  });
});
afterAll(async () => rig?.close());

const slowAddresses = (count: number, tag: string) => Array.from({ length: count }, (_, i) => `${tag}${i}@slow.test`);
const listOf = (result: CallToolResult): ListObjectBody => {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as unknown as ListObjectBody;
};

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: ListServer;
  const agents: Connected[] = [];
  const agentFor = async (key: string) => {
    const agent = await connect({ ...server, prefix: '', revokedKey: '', metricsUrl: '' }, 'email-verify', key);
    agents.push(agent);
    return agent;
  };
  beforeAll(async () => {
    server = await startListServer(mode, { ...rig.env, LIST_RETRY_DELAYS_S: '', VERIFY_BATCH_DEADLINE_MS: '20000' });
  });
  afterAll(async () => {
    for (const agent of agents) await agent.close();
    await server?.close();
  });

  it('is listed as a free, destructive, idempotent tool that says what it stops', async () => {
    const agent = await agentFor(server.key);
    const { tools } = await agent.client.listTools();
    const cancel = tools.find((tool) => tool.name === 'email-verify_list-cancel');
    expect(cancel?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(cancel?.inputSchema).toMatchObject({ required: ['id'], additionalProperties: false });
    expect(cancel?.outputSchema?.type).toBe('object');
    expect(cancel?.description).toMatch(/never probed nor billed/);
  });

  it('cancels a running list as DELETE does: nothing more probed or billed, the callback says cancelled', async () => {
    const key = await server.freshKey();
    const agent = await agentFor(key);
    const emails = slowAddresses(250, `m${mode}`);
    const created = listOf(await agent.callTool('email-verify_list-create', { emails, callbackUrl: 'https://hooks.example.com/c' }));
    const slow = rig.servers['slow.test']!;
    // A session of this list is under way: some of its addresses have reached the mail server.
    const asked = () => emails.filter((address) => rcptCounts(slow).has(address)).length;
    await expect.poll(asked, { timeout: 15_000 }).toBeGreaterThan(0);

    const cancelled = listOf(await agent.callTool('email-verify_list-cancel', { id: created.id }));
    expect(cancelled).toMatchObject({ id: created.id, status: 'cancelled', completedAt: expect.any(String) });
    expect(agent.lastHeaders().get('x-service-cost')).toBe('0');
    expect(await getList(server, key, created.id)).toEqual(cancelled);

    const sessions = slow.connections;
    // Nothing happens: no new session for the cancelled list, past its chunk's end check (every 1 s, processor.ts).
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(slow.connections).toBe(sessions);
    expect(asked()).toBeLessThan(emails.length);
    const after = await getList(server, key, created.id);
    expect(after).toMatchObject({ status: 'cancelled', processed: cancelled.processed, costUsd: cancelled.costUsd });
    await expect
      .poll(() => server.dispatcher.events.filter((event) => event.body.includes(created.id)).map((event) => event.type))
      .toEqual(['list.cancelled']);

    // An ended list is answered as it is, by the tool and by DELETE alike.
    const again = listOf(await agent.callTool('email-verify_list-cancel', { id: created.id }));
    expect(again).toEqual(after);
    const rest = await call(server, `/v1/email-verify/lists/${created.id}`, { key, method: 'DELETE' });
    expect(rest.json()).toEqual(after);
  }, 30_000);

  it('refuses as DELETE does: another key’s list is not_found, a missing or unknown argument names it', async () => {
    const owner = await server.freshKey();
    const list = (
      await call(server, '/v1/email-verify/lists', {
        key: owner,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ emails: ['broken'] }),
      })
    ).json() as ListObjectBody;
    const stranger = await agentFor(await server.freshKey());
    const rest = await call(server, `/v1/email-verify/lists/${list.id}`, { key: await server.freshKey(), method: 'DELETE' });
    expect(rest.status).toBe(404);
    const tool = toolError(await stranger.callTool('email-verify_list-cancel', { id: list.id }));
    expect(tool.error).toBe('not_found');
    expect(tool).toEqual({ ...(rest.json() as object), message: tool.message });
    expect(toolError(await stranger.callTool('email-verify_list-cancel', {}))).toMatchObject({
      error: 'invalid_parameter',
      details: { param: 'id' },
    });
    expect(toolError(await stranger.callTool('email-verify_list-cancel', { id: list.id, force: true }))).toMatchObject({
      error: 'invalid_parameter',
      details: { param: 'force' },
    });
    expect((await getList(server, owner, list.id)).status).not.toBe('cancelled');
  });
});
