/**
 * The tool servers at the HTTP level, in both modes: the bearer key checked before the protocol
 * (401 with its challenge, as REST), GET and DELETE refused, one rate-limit budget and one meter
 * shared by the REST and tool doors of an operation, and the cost on every tool call's response.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type Mode, type TestServer } from '../support/servers.ts';
import { connect, freshKey, rpc, toolCall, toolError, transportFor } from './mcp-client.ts';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

interface Usage {
  operations: Record<string, { calls: number; billableCalls: number; freeRemaining: number; costUsd: string }>;
  totalCostUsd: string;
}

async function expectHttpFailure(promise: Promise<unknown>, status: number): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(StreamableHTTPError);
  expect((error as StreamableHTTPError).code).toBe(status);
}

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(mode, { env: { RATE_LIMIT_QR_GENERATE: '3' } });
  });
  afterAll(async () => server?.close());

  describe('authentication', () => {
    it.each(['email-verify', 'qr'] as const)(
      '%s: the client cannot connect without a key or with a revoked key (HTTP 401)',
      async (name) => {
        await expectHttpFailure(new Client({ name: 't', version: '1' }).connect(transportFor(server, name, null)), 401);
        await expectHttpFailure(new Client({ name: 't', version: '1' }).connect(transportFor(server, name, server.revokedKey)), 401);
      },
    );

    it('answers 401 in the error format with the RFC 6750 challenge, like REST', async () => {
      const missing = await rpc(server, 'qr', INITIALIZE, null);
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="api"');
      expect(missing.json()).toMatchObject({ error: 'unauthorized', message: expect.any(String) });
      expect(missing.headers.get('x-service-cost')).toBe('0');

      const revoked = await rpc(server, 'email-verify', toolCall('email-verify_verify', { email: 'a@b.c' }), server.revokedKey);
      expect(revoked.status).toBe(401);
      expect(revoked.headers.get('www-authenticate')).toBe('Bearer realm="api", error="invalid_token"');
      const rest = await call(server, '/v1/qr/qr?data=hi', { key: server.revokedKey });
      expect(revoked.json()).toEqual(rest.json());
    });
  });

  // Streamable HTTP lets a stateless server refuse GET (no event stream) and DELETE (no session)
  // with 405; the body is the contract's error, as on every route, and the cost header says 0.
  it.each(['email-verify', 'qr'] as const)('%s: GET, DELETE and HEAD answer 405 with Allow: POST in the error format', async (name) => {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const response = await call(server, `/api/mcp/${name}`, { method, key: server.key });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(response.headers.get('x-service-cost')).toBe('0');
      expect(response.json()).toEqual({ error: 'method_not_allowed', message: `${method} is not allowed on /api/mcp/${name}; use POST.` });
    }
    const head = await fetch(`${server.baseUrl}/api/mcp/${name}`, { method: 'HEAD' });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('POST');
  });

  describe('rate limits shared with REST', () => {
    it('2 REST calls and 1 tool call use a budget of 3; the next tool call and the next REST call are 429', async () => {
      const key = await freshKey(server);
      expect((await call(server, '/v1/qr/qr?data=a', { key })).status).toBe(200);
      expect((await call(server, '/v1/qr/qr?data=b', { key })).status).toBe(200);
      const qr = await connect(server, 'qr', key);
      const third = await qr.callTool('qr_generate', { data: 'c' });
      expect(third.isError).toBeFalsy();
      expect(qr.lastHeaders().get('ratelimit-limit')).toBe('3');
      expect(qr.lastHeaders().get('ratelimit-remaining')).toBe('0');

      await expectHttpFailure(qr.callTool('qr_generate', { data: 'd' }), 429);
      const raw = await rpc(server, 'qr', toolCall('qr_generate', { data: 'e' }), key);
      expect(raw.status).toBe(429);
      expect(raw.json()).toMatchObject({ error: 'rate_limited', message: expect.any(String) });
      expect(Number(raw.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(raw.headers.get('x-service-cost')).toBe('0');
      expect((await call(server, '/v1/qr/qr?data=f', { key })).status).toBe(429);

      // Other operations and the free methods are not limited by it.
      expect((await qr.callTool('qr_wifi', { ssid: 'home', password: 'secret123' })).isError).toBeFalsy();
      expect((await qr.client.listTools()).tools).toHaveLength(2);
      await qr.close();
    });

    it('tool calls count against REST: 3 tool calls, then REST is 429', async () => {
      const key = await freshKey(server);
      const qr = await connect(server, 'qr', key);
      for (const data of ['a', 'b', 'c']) expect((await qr.callTool('qr_generate', { data })).isError).toBeFalsy();
      const rest = await call(server, '/v1/qr/qr?data=d', { key });
      expect(rest.status).toBe(429);
      expect((rest.json() as { error: string }).error).toBe('rate_limited');
      await qr.close();
    });

    it('initialize and tools/list are neither limited nor metered', async () => {
      const key = await freshKey(server);
      for (let i = 0; i < 4; i += 1) {
        const qr = await connect(server, 'qr', key);
        await qr.client.listTools();
        expect(qr.lastHeaders().get('x-service-cost')).toBe('0');
        expect(qr.lastHeaders().get('ratelimit-limit')).toBeNull();
        await qr.close();
      }
      const usage = (await call(server, '/v1/usage', { key })).json() as Usage;
      expect(usage.operations['qr.generate']?.calls).toBe(0);
      expect((await call(server, '/v1/qr/qr?data=a', { key })).status).toBe(200);
    });

    it('a rejected tool call (bad input) counts against the budget, as a rejected REST call does', async () => {
      const key = await freshKey(server);
      const qr = await connect(server, 'qr', key);
      for (let i = 0; i < 3; i += 1)
        expect(toolError(await qr.callTool('qr_generate', { data: 'a', scale: 0 })).error).toBe('invalid_parameter');
      expect((await call(server, '/v1/qr/qr?data=a', { key })).status).toBe(429);
      await qr.close();
    });
  });

  describe('metering', () => {
    it('each successful tool call is metered once: cost headers on its HTTP response and in _meta', async () => {
      const key = await freshKey(server, { 'qr.wifi': 1 });
      const qr = await connect(server, 'qr', key);
      const free = await qr.callTool('qr_wifi', { ssid: 'home', password: 'secret123' });
      expect(free._meta).toEqual({ costUsd: '0', freeRemaining: 0 });
      expect(qr.lastHeaders().get('x-service-cost')).toBe('0');
      expect(qr.lastHeaders().get('x-service-free-remaining')).toBe('0');

      const billed = await qr.callTool('qr_wifi', { ssid: 'home', password: 'secret123' });
      expect(billed._meta).toEqual({ costUsd: '0.0005', freeRemaining: 0 });
      expect(qr.lastHeaders().get('x-service-cost')).toBe('0.0005');

      const rejected = await qr.callTool('qr_wifi', { ssid: '' });
      expect(rejected.isError).toBe(true);
      expect(rejected._meta).toBeUndefined();
      expect(qr.lastHeaders().get('x-service-cost')).toBe('0');
      expect(qr.lastHeaders().get('x-service-free-remaining')).toBeNull();
      await qr.close();
    });

    it('a raw JSON-RPC tools/call answers the cost header and a result with _meta', async () => {
      const key = await freshKey(server, { 'qr.wifi': 0 });
      const response = await rpc(server, 'qr', toolCall('qr_wifi', { ssid: 'cafe', security: 'nopass' }, 7), key);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('x-service-cost')).toBe('0.0005');
      expect(response.headers.get('x-request-id')).toBeTruthy();
      const body = response.json() as { id: number; result: { _meta: unknown; structuredContent: { svg: string } } };
      expect(body.id).toBe(7);
      expect(body.result._meta).toEqual({ costUsd: '0.0005', freeRemaining: 0 });
      expect(body.result.structuredContent.svg.startsWith('<svg')).toBe(true);
    });

    it('/v1/usage counts REST and tool calls of an operation together', async () => {
      const key = await freshKey(server, { 'qr.wifi': 2 });
      const qr = await connect(server, 'qr', key);
      expect((await call(server, '/v1/qr/wifi?ssid=home&password=secret123', { key })).status).toBe(200);
      await qr.callTool('qr_wifi', { ssid: 'home', password: 'secret123' });
      await qr.callTool('qr_wifi', { ssid: 'home', password: 'secret123' });
      await qr.callTool('qr_wifi', { ssid: 'home', password: 'short' });
      expect((await call(server, '/v1/qr/wifi?ssid=home&password=secret123', { key })).status).toBe(200);
      const usage = (await call(server, '/v1/usage', { key })).json() as Usage;
      expect(usage.operations['qr.wifi']).toEqual({
        calls: 4,
        billableCalls: 2,
        freeRemaining: 0,
        costUsd: '0.001',
        priceUsd: '0.0005',
        allowanceFrom: 'qr.wifi',
      });
      expect(usage.totalCostUsd).toBe('0.001');
      await qr.close();
    });

    it('a JSON-RPC batch may carry one tool call, not two', async () => {
      const response = await rpc(server, 'qr', [toolCall('qr_generate', { data: 'a' }, 1), toolCall('qr_generate', { data: 'b' }, 2)]);
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({ error: 'invalid_request' });
    });
  });
});
