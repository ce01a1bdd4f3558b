/**
 * Small refusals made right (issue 20): an HTTP/1.1 request without `Host` is refused in the
 * error contract with `X-Request-Id` (Node answered a bare 400 of its own), as every other
 * refusal of the HTTP layer already is; and a query parameter sent twice is named as repeated on
 * every route that takes query parameters, found in the OpenAPI document so that a new route is
 * held to it too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../support/servers.ts';
import { rawRequest, type RawResponse } from './raw-http.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startServer('embedded');
});
afterAll(async () => server?.close());

function expectContractError(response: RawResponse, status: number, code: string): string {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  const body = JSON.parse(response.body) as { error: string; message: string };
  expect(body).toEqual({ error: code, message: expect.any(String) });
  return body.message;
}

async function qrCalls(key: string): Promise<number> {
  const usage = (await call(server, '/v1/usage', { key })).json() as { operations: Record<string, { calls: number }> };
  return usage.operations['qr.generate']?.calls ?? -1;
}

describe('a request without Host', () => {
  const auth = () => `Authorization: Bearer ${server.key}\r\n`;
  it.each([
    ['a metered GET', () => `GET /v1/qr/qr?data=x HTTP/1.1\r\n${auth()}Connection: close\r\n\r\n`, true],
    [
      'a POST with a body',
      () =>
        `POST /v1/email-verify/verify/batch HTTP/1.1\r\n${auth()}Content-Type: application/json\r\nContent-Length: 21\r\nConnection: close\r\n\r\n{"emails":["a@b.co"]}`,
      true,
    ],
    [
      'a tool call',
      () => `POST /api/mcp/qr HTTP/1.1\r\n${auth()}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      true,
    ],
    ['the health check', () => 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n', false],
    ['an unknown path, without a key', () => 'GET /nowhere HTTP/1.1\r\nConnection: close\r\n\r\n', false],
  ])('%s is 400 invalid_request in the error format, with X-Request-Id, not billed', async (_label, request, metered) => {
    const before = await qrCalls(server.key);
    const response = await rawRequest(server.baseUrl, request());
    expect(expectContractError(response, 400, 'invalid_request')).toMatch(/Host/);
    if (metered) expect(response.headers.get('x-service-cost')).toBe('0');
    expect(await qrCalls(server.key)).toBe(before);
  });

  it('is still fine in HTTP/1.0, which has no Host header', async () => {
    const response = await rawRequest(server.baseUrl, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(response.status).toBe(200);
  });

  it.each([
    ['an HTTP/2 preface on a plain HTTP/1.1 port', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
    ['a folded header line', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n'],
    ['bare LF line ends', 'GET /healthz HTTP/1.1\nHost: x\n\n'],
    ['a space before the colon', 'GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n'],
    ['a NUL in the target', 'GET /heal\u0000thz HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['two Content-Lengths', 'POST /v1/email-verify/verify/batch HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
    ['a Content-Length that is no number', 'POST /v1/email-verify/verify/batch HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
  ])('like every HTTP-parser refusal: %s', async (_label, request) => {
    expectContractError(await rawRequest(server.baseUrl, request), 400, 'invalid_request');
  });
});

interface OpenApi {
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
}

describe('a query parameter given twice', () => {
  it('is named as repeated on every route that takes query parameters', async () => {
    const document = (await call(server, '/openapi.json')).json() as OpenApi;
    const checked: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const { name } of (operation.parameters ?? []).filter((parameter) => parameter.in === 'query')) {
          const url = `${path.replace(/\{[^}]+\}/g, 'lst_000000000000000000000000')}?${name}=1&${name}=2`;
          const post = method === 'post';
          const response = await call(server, url, {
            key: server.key,
            method: method.toUpperCase(),
            ...(post ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ emails: ['broken'] }) } : {}),
          });
          expect(response.status, `${method} ${url}`).toBe(400);
          expect(response.json(), `${method} ${url}`).toEqual({
            error: 'invalid_parameter',
            message: `\`${name}\` is given more than once; send it once.`,
            details: { param: name },
          });
          checked.push(`${method} ${path} ${name}`);
        }
      }
    }
    // The QR, wifi, single-verify and list routes: every one of their query parameters.
    expect(checked).toEqual(
      expect.arrayContaining(['get /v1/qr/qr data', 'get /v1/qr/wifi security', 'get /v1/email-verify/verify email']),
    );
    expect(checked.length).toBeGreaterThan(15);
  });

  it('data=hi&data=ho, the issue’s own case', async () => {
    const response = await call(server, '/v1/qr/qr?data=hi&data=ho', { key: server.key });
    expect(response.json()).toMatchObject({ message: '`data` is given more than once; send it once.' });
    expect(response.headers.get('x-service-cost')).toBe('0');
  });
});
