/**
 * The tool servers' Origin check (DNS rebinding): a request whose `Origin` is neither the
 * service's own nor listed in MCP_ALLOWED_ORIGINS is refused 403 in both protocol eras, before
 * the key check and before anything runs, is counted or billed; requests without `Origin`, from
 * the service's own origin or from a listed one are served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../support/servers.ts';
import { freshKey, rpc, toolCall } from './mcp-client.ts';
import { CLIENT_KINDS, connectAs, modernRpc } from './eras.ts';

const EVIL = 'http://evil.example';
const LISTED = 'https://app.example.com';

interface Usage {
  operations: Record<string, { calls: number }>;
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer('embedded', { env: { MCP_ALLOWED_ORIGINS: ` ${LISTED}/ , https://other.example:8443` } });
});
afterAll(async () => server?.close());

const usedCalls = async (key: string) => ((await call(server, '/v1/usage', { key })).json() as Usage).operations['qr.generate']?.calls;

describe('a foreign Origin', () => {
  it('2025 era: initialize and tools/call are 403 forbidden in the error format, nothing counted or billed', async () => {
    const key = await freshKey(server);
    for (const body of [
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'r', version: '1' } },
      },
      toolCall('qr_generate', { data: 'rebound' }),
    ]) {
      const response = await call(server, '/api/mcp/qr', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin: EVIL },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(403);
      expect(response.json()).toMatchObject({ error: 'forbidden', message: expect.stringContaining('MCP_ALLOWED_ORIGINS') });
      expect(response.headers.get('x-service-cost')).toBe('0');
      expect(response.headers.get('ratelimit-limit')).toBeNull();
    }
    expect(await usedCalls(key)).toBe(0);
  });

  it('2026 era: a tools/call is 403 with a JSON-RPC error body, nothing counted or billed', async () => {
    const key = await freshKey(server);
    const response = await modernRpc(
      server,
      'qr',
      { method: 'tools/call', params: { name: 'qr_generate', arguments: { data: 'x' } } },
      { key, headers: { origin: EVIL } },
    );
    expect(response.status).toBe(403);
    expect(response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { error: 'forbidden' } } });
    expect(response.headers.get('x-service-cost')).toBe('0');
    expect(await usedCalls(key)).toBe(0);
  });

  it('is refused before the key is checked, and so are null and unparsable origins', async () => {
    for (const origin of [EVIL, 'null', 'not a url', `${EVIL}:${new URL(server.baseUrl).port}`]) {
      const refused = await call(server, '/api/mcp/qr', {
        method: 'POST',
        key: null,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin },
        body: JSON.stringify(toolCall('qr_generate', { data: 'x' })),
      });
      expect(refused.status, origin).toBe(403);
    }
    // Without an Origin the same keyless request is the key check's 401.
    expect((await rpc(server, 'qr', toolCall('qr_generate', { data: 'x' }), null)).status).toBe(401);
  });

  it.each(CLIENT_KINDS)('%s client: cannot connect from a foreign origin', async (kind) => {
    await expect(connectAs(kind, server, 'email-verify', { headers: { Origin: EVIL } })).rejects.toThrow(/403|Forbidden/i);
  });
});

describe('allowed origins', () => {
  it('no Origin, the service’s own, a listed one (any case, default port, trailing slash) are served in both eras', async () => {
    const own = new URL(server.baseUrl).origin;
    for (const origin of [undefined, own, LISTED, 'HTTPS://APP.example.com:443', 'https://other.example:8443']) {
      const headers: Record<string, string> = origin === undefined ? {} : { origin };
      const legacy = await call(server, '/api/mcp/qr', {
        method: 'POST',
        key: server.key,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(toolCall('qr_generate', { data: 'fine' })),
      });
      expect(legacy.status, String(origin)).toBe(200);
      const modern = await modernRpc(server, 'qr', { method: 'tools/list' }, { headers });
      expect(modern.status, String(origin)).toBe(200);
    }
    const otherPort = await call(server, '/api/mcp/qr', {
      method: 'POST',
      key: server.key,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin: 'https://other.example' },
      body: JSON.stringify(toolCall('qr_generate', { data: 'x' })),
    });
    expect(otherPort.status).toBe(403);
  });
});
