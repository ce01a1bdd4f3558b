/**
 * One named test per contract break found by hand (issue 8), against real gateways in both modes:
 * the bearer scheme's case, HEAD on metered routes, a wrong method with a JSON body, a header
 * section too large, malformed request lines, messages written for people, and any string at all
 * as a batch entry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '@svc/contracts';
import { call, startServer, type Mode, type TestServer, postBatch } from '../support/servers.ts';
import { connect, type Connected } from '../mcp/mcp-client.ts';
import { rawRequest, type RawResponse } from './raw-http.ts';

const METERED_GETS = ['/v1/qr/qr?data=x', '/v1/qr/wifi?ssid=home&password=secret123', '/v1/email-verify/verify?email=ann%40example.com'];
/** zod's own texts, which must never reach a caller. */
const VALIDATOR_TEXT = /Invalid input|Invalid option|Invalid string|Too small|Too big|expected \w+, received|`(\w+)` `\1`/;

function expectContractError(response: RawResponse, status: number, code: string): { error: string; message: string } {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  const body = JSON.parse(response.body) as { error: string; message: string };
  expect(body).toEqual({ error: code, message: expect.any(String) });
  expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS]).toBe(status);
  return body;
}

async function jobsRun(server: TestServer): Promise<number> {
  const metrics = (await call({ baseUrl: server.metricsUrl }, '/metrics')).text;
  return metrics
    .split('\n')
    .filter((line) => line.startsWith('job_wait_seconds_count'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  let tools: Connected;
  beforeAll(async () => {
    server = await startServer(mode, { env: { VERIFY_BATCH_DEADLINE_MS: '2000', VERIFY_DNS_SERVERS: '127.0.0.1:9' } });
    tools = await connect(server, 'email-verify');
  });
  afterAll(async () => {
    await tools?.close();
    await server?.close();
  });

  it.each(['bearer', 'BEARER', 'BeArEr', 'Bearer  ', 'bearer    '])('the scheme %j before the key is accepted', async (scheme) => {
    const response = await call(server, '/v1/qr/qr?data=x', { headers: { authorization: `${scheme} ${server.key}` } });
    expect(response.status).toBe(200);
  });

  it('HEAD on a metered route is 405 with Allow: GET and cost 0, and runs no job', async () => {
    const before = await jobsRun(server);
    for (const path of METERED_GETS) {
      const response = await fetch(`${server.baseUrl}${path}`, { method: 'HEAD', headers: { authorization: `Bearer ${server.key}` } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET');
      expect(response.headers.get('x-service-cost')).toBe('0');
      expect(response.headers.get('x-request-id')).toBeTruthy();
    }
    expect(await jobsRun(server)).toBe(before);
    const usage = (await call(server, '/v1/usage', { key: server.key })).json() as { operations: Record<string, { calls: number }> };
    expect(usage.operations['qr.wifi']?.calls).toBe(0);
    // A route that bills nothing keeps HEAD.
    expect((await fetch(`${server.baseUrl}/healthz`, { method: 'HEAD' })).status).toBe(200);
  });

  it('a wrong method is 405 whatever the content type and body', async () => {
    const cases = [
      ['PUT', '/v1/qr/qr?data=x', '{}'],
      ['POST', '/v1/qr/qr?data=x', '{"data":"x"}'],
      ['DELETE', '/v1/email-verify/verify/batch', '{'],
      ['PATCH', '/v1/email-verify/verify/batch', 'not json at all'],
      ['GET', '/v1/email-verify/verify/batch', '{"emails":["a@b.c"]}'],
      ['POST', '/v1/usage', 'x'.repeat(70 * 1024)],
      // A path with a parameter: the list of that id exists under GET and DELETE.
      ['POST', '/v1/email-verify/lists/lst_0123456789abcdef', '{}'],
    ] as const;
    const allowOf: Record<string, string> = {
      '/v1/email-verify/verify/batch': 'POST',
      '/v1/usage': 'GET, HEAD',
      '/v1/email-verify/lists/lst_0123456789abcdef': 'GET, HEAD, DELETE',
    };
    for (const [method, path, body] of cases) {
      const response = await rawRequest(
        server.baseUrl,
        `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      expectContractError(response, 405, 'method_not_allowed');
      expect(response.headers.get('allow')).toBe(allowOf[path] ?? 'GET');
      // Metered paths answer their cost; reading a list or the usage is not metered.
      if (path.startsWith('/v1/qr/') || path.startsWith('/v1/email-verify/verify'))
        expect(response.headers.get('x-service-cost')).toBe('0');
      else expect(response.headers.get('x-service-cost') ?? null).toBeNull();
    }
  });

  it('a header section over 16 KiB is 431 headers_too_large in the error format, with X-Request-Id and cost 0', async () => {
    const huge = 'a'.repeat(20 * 1024);
    for (const request of [
      `GET /v1/qr/qr?data=${huge} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /v1/qr/qr?data=x HTTP/1.1\r\nHost: x\r\nX-Padding: ${huge}\r\n\r\n`,
    ]) {
      const response = await rawRequest(server.baseUrl, request);
      expectContractError(response, 431, 'headers_too_large');
      expect(response.headers.get('x-service-cost')).toBe('0');
    }
    // fetch, as a client library sends it.
    const response = await fetch(`${server.baseUrl}/v1/qr/qr?data=${huge}`, { headers: { authorization: `Bearer ${server.key}` } });
    expect(response.status).toBe(431);
    expect(await response.json()).toEqual({ error: 'headers_too_large', message: expect.any(String) });
  });

  it.each([
    ['garbage', 'GARBAGE\r\n\r\n'],
    ['an unknown method', 'FROB /v1/qr/qr HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['an HTTP version from the future', 'GET /v1/qr/qr HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['a space in the target', 'GET /v1/qr/qr?data=a b HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a header without a colon', 'GET /v1/qr/qr HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'],
    ['a control character in a header', 'GET /v1/qr/qr HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n'],
    ['a bad chunk size', 'POST /v1/email-verify/verify/batch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
    [
      'both Content-Length and chunked',
      'POST /v1/email-verify/verify/batch HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
  ])('a malformed request (%s) is 400 invalid_request in the error format', async (_label, request) => {
    const response = await rawRequest(server.baseUrl, request);
    expectContractError(response, 400, 'invalid_request');
  });

  it('messages are written for people, never the validator raw text', async () => {
    const cases: Array<[string, string]> = [
      ['/v1/qr/qr?data=x&dark=123&light=112233', '`light` must differ from `dark`, or the code cannot be read.'],
      ['/v1/qr/qr?data=x&format=gif', '`format` must be one of svg, json.'],
      ['/v1/qr/qr?data=', '`data` must not be empty.'],
      ['/v1/qr/qr', '`data` is required.'],
      ['/v1/qr/qr?data=x&scale=0', '`scale` must be from 1 to 40.'],
      ['/v1/qr/qr?data=x&scale=2.5', '`scale` must be a whole number from 1 to 40.'],
      // -1 is a whole number: the message must say what is allowed, not what it is not.
      ['/v1/qr/qr?data=x&margin=-1', '`margin` must be a whole number from 0 to 20.'],
      ['/v1/qr/qr?data=x&scale=99999999999', '`scale` must be a whole number from 1 to 40.'],
      ['/v1/qr/wifi?ssid=home&hidden=maybe&password=secret123', '`hidden` must be true or false.'],
      ['/v1/qr/wifi?ssid=home', '`password` is required with security=WPA.'],
    ];
    for (const [path, message] of cases) {
      const body = (await call(server, path, { key: server.key })).json() as { message: string };
      expect(body.message).toBe(message);
    }
    const qr = await connect(server, 'qr');
    try {
      for (const args of [{ data: 'x', scale: '8' }, { data: 5 }, { data: 'x', margin: -1 }, { data: 'x', light: 'fff', dark: 'fff' }]) {
        const result = await qr.callTool('qr_generate', args);
        const text = (result.content[0] as { text: string }).text;
        expect(text).not.toMatch(VALIDATOR_TEXT);
      }
    } finally {
      await qr.close();
    }
  });

  it("the tool servers' HTTP-level refusals are in the error format too, with cost 0", async () => {
    const post = (body: string, accept = 'application/json, text/event-stream') =>
      rawRequest(
        server.baseUrl,
        `POST /api/mcp/qr HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.key}\r\nContent-Type: application/json\r\n` +
          `Accept: ${accept}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    for (const response of [
      await post('{"not":"json-rpc"}'),
      await post('{"jsonrpc":"2.0","id":1}'),
      await post('42'),
      await post(ping, 'text/html'),
    ]) {
      expectContractError(response, 400, 'invalid_request');
      expect(response.headers.get('x-service-cost')).toBe('0');
    }
    expect((await post(ping)).status).toBe(200);
  });

  it('any string is a batch result: a lone surrogate, NUL, a bidi mark; no domain is looked up for a syntax failure', async () => {
    const emails = ['\ud800@b.com', 'a\u0000b@example.com', '\u202eevil@example.com', 'plain'];
    const response = await postBatch(server, server.key, emails);
    expect(response.status).toBe(200);
    const body = response.json() as {
      results: Array<{ email: string; verdict: string; reason: string; checks: { domainExists: unknown } }>;
    };
    expect(body.results.map((result) => result.email)).toEqual(emails);
    // A lone surrogate has no UTF-8 form: it cannot be an address.
    for (const index of [0, 1, 3]) expect(body.results[index]).toMatchObject({ verdict: 'undeliverable', reason: 'invalid_syntax' });
    for (const result of body.results.filter((candidate) => candidate.reason === 'invalid_syntax')) {
      expect(result.checks.domainExists).toBeNull();
    }
    const tool = await tools.callTool('email-verify_verify-batch', { emails });
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toEqual(body);
  });
});
