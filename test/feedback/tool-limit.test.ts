/**
 * The feedback tool and the feedback doors share one budget per key, RATE_LIMIT_EMAIL_VERIFY_FEEDBACK,
 * as the billed operations' tools share theirs with REST (test/mcp/http.test.ts): a limit that
 * the tool did not count against could be bypassed by calling the tool. In both modes (the
 * distributed one keeps the budget in Redis), on real sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type Mode, type TestServer } from '../support/servers.ts';
import { connect, freshKey, rpc, toolCall } from '../mcp/mcp-client.ts';

const LIMIT = 3;
const events = (name: string) => ({ events: [{ email: `${name}@limit.test`, outcome: 'hard_bounce' }] });

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(mode, { env: { RATE_LIMIT_EMAIL_VERIFY_FEEDBACK: String(LIMIT) } });
  });
  afterAll(async () => server?.close());

  const rest = (key: string, name: string) =>
    call(server, '/v1/email-verify/feedback', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(events(name)),
    });

  it('2 REST calls and 1 tool call use a budget of 3; the next tool call and the next REST call are 429', async () => {
    const key = await freshKey(server);
    expect((await rest(key, 'a')).status).toBe(200);
    expect((await rest(key, 'b')).status).toBe(200);
    const tools = await connect(server, 'email-verify', key);
    try {
      const third = await tools.callTool('email-verify_feedback', events('c'));
      expect(third.structuredContent).toEqual({ accepted: 1, ignored: 0 });
      expect(tools.lastHeaders().get('ratelimit-limit')).toBe(String(LIMIT));
      expect(tools.lastHeaders().get('ratelimit-remaining')).toBe('0');
      // Listing the tools is no call of it.
      await tools.client.listTools();
    } finally {
      await tools.close();
    }
    const refused = await rpc(server, 'email-verify', toolCall('email-verify_feedback', events('d')), key);
    expect(refused.status).toBe(429);
    expect(refused.json()).toMatchObject({ error: 'rate_limited', message: expect.any(String) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await rest(key, 'e')).status).toBe(429);
    const history = await call(server, '/v1/email-verify/history?email=d@limit.test', { key });
    expect((history.json() as { events: unknown[] }).events, 'the refused call recorded nothing').toEqual([]);
  });

  it('tool calls count against the REST doors, and other tools are not limited by it', async () => {
    const key = await freshKey(server);
    for (const name of ['f', 'g', 'h']) {
      const answer = await rpc(server, 'email-verify', toolCall('email-verify_feedback', events(name)), key);
      expect(answer.status, name).toBe(200);
    }
    const webhook = await call(server, '/v1/email-verify/feedback/postmark', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ RecordType: 'Delivery', Recipient: 'i@limit.test', DeliveredAt: new Date().toISOString() }),
    });
    expect(webhook.status).toBe(429);
    const verify = await rpc(server, 'email-verify', toolCall('email-verify_verify', { email: 'not-an-address' }), key);
    expect(verify.status).toBe(200);
  });
});
