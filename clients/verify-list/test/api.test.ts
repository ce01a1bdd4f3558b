/**
 * The client's patience against a real HTTP server on loopback that misbehaves as servers and
 * networks do: 429 and 503 with Retry-After, a server not listening yet, an upload cut mid-way
 * (not retried: it may have created a list), a download cut mid-body (started again), refusals.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiFailure, ListApi, Unreachable, backoffMs, networkProblem, retryAfterMs } from '../src/api.ts';

const LIST = {
  id: 'lst_5f0c3a9d8e7b6a5f4e3d2c1b',
  name: 'a.csv',
  status: 'queued',
  count: 2,
  distinct: 2,
  processed: 0,
  summary: { deliverable: 0, risky: 0, undeliverable: 0 },
  costUsd: '0',
};

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
type Handler = (request: Seen, response: ServerResponse, index: number) => void;

let dir: string;
let server: Server | undefined;
let seen: Seen[] = [];

async function serve(handler: Handler, port = 0): Promise<string> {
  seen = [];
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body };
      seen.push(entry);
      handler(entry, response, seen.length - 1);
    });
  });
  await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

function api(url: string, signal = new AbortController().signal) {
  const notices: string[] = [];
  return { api: new ListApi({ url, key: 'sk_test', signal, notice: (message) => notices.push(message) }), notices };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verify-list-api-'));
});
afterEach(async () => {
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server?.closeAllConnections();
  server = undefined;
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('waiting as the server asks', () => {
  it('reads Retry-After as seconds or as a date, and backs off from 0.5 s to 15 s', () => {
    expect(retryAfterMs('5')).toBe(5000);
    expect(retryAfterMs(new Date(Date.now() + 3000).toUTCString(), Date.now())).toBeGreaterThan(1000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('999999')).toBe(3_600_000);
    expect([0, 1, 2, 3, 10].map((attempt) => backoffMs(attempt, () => 0))).toEqual([500, 1000, 2000, 4000, 15000]);
    expect(backoffMs(0, () => 1)).toBe(400);
  });

  it('a 503 with Retry-After: waits that long, says so, then reads the list', async () => {
    const url = await serve((_request, response, index) =>
      index === 0
        ? json(response, 503, { error: 'service_unavailable', message: 'The job backend is down.' }, { 'retry-after': '1' })
        : json(response, 200, LIST),
    );
    const { api: client, notices } = api(url);
    const started = performance.now();
    expect(await client.get(LIST.id)).toEqual(LIST);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(notices).toEqual(['503 service_unavailable: The job backend is down.; trying again in 1.0 s']);
    expect(seen.map((request) => request.headers.authorization)).toEqual(['Bearer sk_test', 'Bearer sk_test']);
  });

  it('a 429 on the upload: sends the whole file again after Retry-After', async () => {
    const file = join(dir, 'a.csv');
    await writeFile(file, 'email\nann@example.com\nbob@example.com\n');
    const url = await serve((_request, response, index) =>
      index === 0
        ? json(response, 429, { error: 'rate_limited', message: 'This key already has 3 lists queued or running.' }, { 'retry-after': '1' })
        : json(response, 202, LIST),
    );
    const { api: client, notices } = api(url);
    expect(await client.create(file, { name: 'a b.csv', callbackUrl: 'https://hooks.example.com/x?y=1' })).toEqual(LIST);
    expect(notices[0]).toContain('429 rate_limited: This key already has 3 lists queued or running.; trying again in 1.0 s');
    expect(seen).toHaveLength(2);
    for (const request of seen) {
      expect(request.method).toBe('POST');
      expect(request.url).toBe('/v1/email-verify/lists?name=a+b.csv&callbackUrl=https%3A%2F%2Fhooks.example.com%2Fx%3Fy%3D1');
      expect(request.headers['content-type']).toBe('text/csv');
      expect(request.headers['content-length']).toBe('38');
      expect(request.body).toBe('email\nann@example.com\nbob@example.com\n');
    }
  });

  it('a server not listening yet: tries again until it answers', async () => {
    const port = await serve(() => undefined).then((url) => Number(new URL(url).port));
    await new Promise((resolve) => server!.close(resolve));
    const file = join(dir, 'b.csv');
    await writeFile(file, 'email\nann@example.com\n');
    const { api: client, notices } = api(`http://127.0.0.1:${port}`);
    const created = client.create(file, {});
    await expect.poll(() => notices.length).toBeGreaterThanOrEqual(2);
    await serve((_request, response) => json(response, 202, LIST), port);
    expect(await created).toEqual(LIST);
    expect(notices[0]).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); trying again in 0\.\d s$/);
  });

  it('an upload cut after it was sent is not sent again: it may have made a list', async () => {
    const file = join(dir, 'c.csv');
    await writeFile(file, 'email\nann@example.com\n');
    const url = await serve((_request, response) => response.socket?.destroy());
    const { api: client } = api(url);
    const failure = await client.create(file, {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Unreachable);
    expect((failure as Error).message).toContain('the list may or may not have been created; GET /v1/email-verify/lists shows your lists');
    expect(seen).toHaveLength(1);
  });

  it('a refusal is not tried again: it comes back with the API status, code and message', async () => {
    const url = await serve((_request, response) =>
      json(response, 401, { error: 'unauthorized', message: 'This API key is not valid.' }, { 'www-authenticate': 'Bearer realm="api"' }),
    );
    const failure = await api(url)
      .api.get(LIST.id)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiFailure);
    expect(failure).toMatchObject({ status: 401, code: 'unauthorized', apiMessage: 'This API key is not valid.' });
    expect(seen).toHaveLength(1);
  });

  it('stops waiting at once when interrupted', async () => {
    const url = await serve((_request, response) =>
      json(response, 503, { error: 'service_unavailable', message: 'down' }, { 'retry-after': '60' }),
    );
    const stop = new AbortController();
    const pending = api(url, stop.signal).api.get(LIST.id);
    await expect.poll(() => seen.length).toBe(1);
    stop.abort(new Error('SIGINT'));
    await expect(pending).rejects.toThrow(/aborted|SIGINT/); // not after the 60 s the server asked for
  });

  it('says why fetch failed in a word', () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    expect(networkProblem(refused)).toBe('ECONNREFUSED');
    expect(networkProblem(Object.assign(new TypeError('fetch failed'), { cause: new Error('bad port') }))).toBe('bad port');
  });
});

describe('downloading the results', () => {
  const CSV = `email,verdict,score,reason,did_you_mean\n${'ann@example.com,deliverable,95,accepted_email,\n'.repeat(2000)}`;

  it('streams them into the output through a .part file; a download cut mid-body starts again', async () => {
    const url = await serve((_request, response, index) => {
      response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8', 'x-list-status': 'completed', 'x-list-pending': '0' });
      if (index === 0) {
        response.write(CSV.slice(0, 10_000));
        setTimeout(() => response.socket?.destroy(), 50);
      } else response.end(CSV);
    });
    const { api: client, notices } = api(url);
    const output = join(dir, 'out.csv');
    expect(await client.download(LIST.id, output)).toEqual({ status: 'completed', pending: 0 });
    expect(await readFile(output, 'utf8')).toBe(CSV);
    expect(existsSync(`${output}.part`)).toBe(false);
    expect(notices[0]).toMatch(/^the download was cut \(.+\); starting it again in 0\.\d s$/);
    expect(seen.map((request) => request.url)).toEqual([
      `/v1/email-verify/lists/${LIST.id}/results?format=csv&columns=full`,
      `/v1/email-verify/lists/${LIST.id}/results?format=csv&columns=full`,
    ]);
  });
});
