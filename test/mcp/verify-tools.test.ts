/**
 * The verify tools for real: the SDK's own client calls them on a gateway whose verify worker
 * probes the scripted loopback mail world; the result equals the REST body for the same input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailRig, type MailRig } from '@svc/testkit';
import { startServer, type Mode, type TestServer, postBatch } from '../support/servers.ts';
import { connect, type Connected } from './mcp-client.ts';

let rig: MailRig;
beforeAll(async () => {
  rig = await startMailRig('tools.test', '127.0.0.31', ['ada@tools.test']);
});
afterAll(async () => rig?.close());

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  let verify: Connected;
  beforeAll(async () => {
    server = await startServer(mode, { env: rig.env });
    verify = await connect(server, 'email-verify');
  });
  afterAll(async () => {
    await verify?.close();
    await server?.close();
  });

  it('email-verify_verify-batch answers the REST body, in order, metered once', async () => {
    const emails = ['ada@tools.test', 'nobody@tools.test', 'not an address'];
    const result = await verify.callTool('email-verify_verify-batch', { emails });
    expect(result.isError).toBeFalsy();
    const body = result.structuredContent as {
      count: number;
      results: Array<{ email: string; verdict: string }>;
      summary: Record<string, number>;
    };
    expect(body.count).toBe(3);
    expect(body.results.map((entry) => [entry.email, entry.verdict])).toEqual([
      ['ada@tools.test', 'deliverable'],
      ['nobody@tools.test', 'undeliverable'],
      ['not an address', 'undeliverable'],
    ]);
    expect(body.summary).toEqual({ deliverable: 1, risky: 0, undeliverable: 2 });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(body);
    expect(result._meta).toEqual({ costUsd: '0', freeRemaining: 9 });
    const rest = await postBatch(server, server.key, emails);
    expect(rest.json()).toEqual(body);
  });

  it('email-verify_verify answers one result object', async () => {
    const result = await verify.callTool('email-verify_verify', { email: 'ada@tools.test' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ email: 'ada@tools.test', verdict: 'deliverable', reason: 'accepted_email' });
  });
});
