/**
 * Real responses of every documented route, successes and errors, conform to the gateway's own
 * /openapi.json: documented status, media type, body schema and headers. The errors are caused as
 * an operator or a caller would cause them: bad input, no key, wrong method, a body too large,
 * a rate limit of 1, no worker at all, a worker that hangs past the deadline, a worker that fails.
 */
import { QR_JOB, VERIFY_JOB } from '@svc/contracts';
import { registerHandler, type JobContext } from '@svc/jobs';
import { startMailRig, type MailRig } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiResponseValidator, type OpenApiDocument } from '../support/openapi.ts';
import { call, startServer, type ServerOptions, type TestServer } from '../support/servers.ts';

type Called = Awaited<ReturnType<typeof call>>;

const QR = '/v1/qr/qr';
const WIFI = '/v1/qr/wifi';
const BATCH = '/v1/email-verify/verify/batch';
const SINGLE = '/v1/email-verify/verify';
const USAGE = '/v1/usage';
const JSON_TYPE = { 'content-type': 'application/json' };

/** A call of each job route with valid input, and one with input it refuses (400). */
const JOB_ROUTES = [
  { method: 'get', path: QR, good: `${QR}?data=hello`, bad: `${QR}?data=hello&scale=99` },
  { method: 'get', path: WIFI, good: `${WIFI}?ssid=Home&password=correct-horse`, bad: `${WIFI}?ssid=Home` },
  { method: 'get', path: SINGLE, good: `${SINGLE}?email=ann%40shop.test`, bad: `${SINGLE}?email=` },
  { method: 'post', path: BATCH, good: BATCH, bad: BATCH },
] as const;
type JobRoute = (typeof JOB_ROUTES)[number];

const BATCH_BODY = JSON.stringify({ emails: ['ann@shop.test', 'nobody@shop.test', 'ann@gmial.com', 'not-an-address'] });

function request(route: JobRoute, key: string | null, input: 'good' | 'bad'): [string, RequestInit & { key: string | null }] {
  if (route.method === 'get') return [route[input], { key }];
  const body = input === 'good' ? BATCH_BODY : JSON.stringify({ emails: [] });
  return [route.path, { key, method: 'POST', headers: JSON_TYPE, body }];
}

/** Handlers that answer only well after the deadline (so that the server can still close), or always fail. */
const hang = (_payload: unknown, context: JobContext): Promise<never> =>
  new Promise((_resolve, reject) => context.signal.addEventListener('abort', () => setTimeout(() => reject(new Error('gave up')), 500)));
const fail = (): Promise<never> => Promise.reject(new Error('the renderer crashed'));

describe('responses conform to /openapi.json', () => {
  let rig: MailRig;
  const servers: TestServer[] = [];
  let main: TestServer;
  let document: OpenApiDocument;
  let validator: OpenApiResponseValidator;

  const start = async (options: ServerOptions): Promise<TestServer> => {
    const server = await startServer('embedded', options);
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    rig = await startMailRig('shop.test', '127.0.0.22', ['ann@shop.test']);
    main = await start({ env: { ...rig.env, VERIFY_BATCH_DEADLINE_MS: '5000', VERIFY_RESULT_CACHE_TTL_S: '0' } });
    document = (await call(main, '/openapi.json')).json() as OpenApiDocument;
    validator = new OpenApiResponseValidator(document);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await rig?.close();
    const distinct = [...new Set(validator.checked)].sort();
    console.log(`validated ${validator.checked.length} responses, ${distinct.length} route-status pairs: ${distinct.join('; ')}`);
  });

  /** Calls, checks the status the case is about, and checks the response against the document. */
  async function expectDocumented(
    server: TestServer,
    operation: { method: string; path: string },
    url: string,
    init: RequestInit & { key?: string | null },
    status: number,
  ): Promise<Called> {
    const response = await call(server, url, init);
    expect(response.status, `${url}: ${response.text}`).toBe(status);
    expect(validator.problems(operation.method, operation.path, response)).toEqual([]);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    return response;
  }

  it('the validator itself refuses what the document does not allow', () => {
    const validator = new OpenApiResponseValidator(document);
    const headers = new Headers({ 'content-type': 'application/json', 'x-service-cost': '0.50' });
    const wrong = { status: 200, headers, text: JSON.stringify({ version: 1, ecc: 'H', size: 21, margin: 4 }) };
    const problems = validator.problems('get', QR, wrong);
    expect(problems.some((problem) => problem.includes('ecc'))).toBe(true);
    expect(problems.some((problem) => problem.includes('modules'))).toBe(true);
    expect(problems.some((problem) => problem.includes('X-Service-Cost'))).toBe(true);
    expect(validator.problems('get', QR, { status: 418, headers, text: '' })).toEqual(['generateQrCode does not document status 418']);
    const svgAsText = { status: 200, headers: new Headers({ 'content-type': 'text/plain' }), text: '<svg/>' };
    expect(validator.problems('get', QR, svgAsText)[0]).toContain('content type text/plain');
  });

  it('200: both QR formats of both QR routes, batch and single verify, usage', async () => {
    for (const path of [QR, WIFI]) {
      const query = path === QR ? 'data=hello' : 'ssid=Home&password=correct-horse';
      const svg = await expectDocumented(main, { method: 'get', path }, `${path}?${query}`, { key: main.key }, 200);
      expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      const matrix = await expectDocumented(main, { method: 'get', path }, `${path}?${query}&format=json`, { key: main.key }, 200);
      expect(matrix.headers.get('content-type')).toMatch(/^application\/json/);
    }
    const batch = await expectDocumented(
      main,
      { method: 'post', path: BATCH },
      BATCH,
      { key: main.key, method: 'POST', headers: JSON_TYPE, body: BATCH_BODY },
      200,
    );
    expect((batch.json() as { count: number }).count).toBe(4);
    await expectDocumented(main, { method: 'get', path: SINGLE }, `${SINGLE}?email=ann%40shop.test`, { key: main.key }, 200);
    const usage = await expectDocumented(main, { method: 'get', path: USAGE }, USAGE, { key: main.key }, 200);
    expect((usage.json() as { operations: Record<string, { calls: number }> }).operations['qr.generate']?.calls).toBe(2);
  });

  it('200 responses carry the cost, the free allowance left and the rate-limit headers', async () => {
    const response = await call(main, `${QR}?data=headers`, { key: main.key });
    for (const name of ['X-Service-Cost', 'X-Service-Free-Remaining', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) {
      expect(response.headers.get(name), name).not.toBeNull();
    }
  });

  it('400: each route with input it refuses, and each kind of batch body error', async () => {
    for (const route of JOB_ROUTES) {
      const [url, init] = request(route, main.key, 'bad');
      const response = await expectDocumented(main, route, url, init, 400);
      expect(response.headers.get('x-service-cost')).toBe('0');
    }
    const batch = { method: 'post', path: BATCH };
    const post = (body: string) => ({ key: main.key, method: 'POST', headers: JSON_TYPE, body });
    const tooMany = await expectDocumented(main, batch, BATCH, post(JSON.stringify({ emails: Array(101).fill('a@b.co') })), 400);
    expect(tooMany.json()).toMatchObject({ error: 'too_many_emails' });
    await expectDocumented(main, batch, BATCH, post('{"emails": [1]}'), 400);
    await expectDocumented(main, batch, BATCH, post('not json'), 400);
    const tooLong = await expectDocumented(main, { method: 'get', path: QR }, `${QR}?data=${'a'.repeat(801)}`, { key: main.key }, 400);
    expect(tooLong.json()).toMatchObject({ error: 'content_too_long' });
  });

  it('401: every route without a key, with a revoked key and with a malformed header', async () => {
    const routes = [...JOB_ROUTES, { method: 'get', path: USAGE, good: USAGE, bad: USAGE } as const];
    for (const route of routes) {
      for (const key of [null, main.revokedKey]) {
        const [url, init] = route.path === USAGE ? [USAGE, { key }] : request(route, key, 'good');
        const response = await expectDocumented(main, route, url, init, 401);
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="api"/);
      }
    }
    await expectDocumented(main, { method: 'get', path: QR }, `${QR}?data=x`, { headers: { authorization: 'Basic abc' } }, 401);
  });

  it('405: a method the path does not take', async () => {
    const cases: Array<[{ method: string; path: string }, string, string]> = [
      [{ method: 'get', path: QR }, QR, 'POST'],
      [{ method: 'get', path: WIFI }, WIFI, 'DELETE'],
      [{ method: 'get', path: SINGLE }, SINGLE, 'PUT'],
      [{ method: 'post', path: BATCH }, BATCH, 'GET'],
      [{ method: 'get', path: USAGE }, USAGE, 'POST'],
    ];
    for (const [operation, url, method] of cases) {
      const response = await expectDocumented(
        main,
        operation,
        url,
        { key: main.key, method, headers: JSON_TYPE, body: method === 'GET' ? null : '{}' },
        405,
      );
      expect(response.headers.get('allow')).toBeTruthy();
    }
  });

  it('413 and 415: a batch body over 64 KiB, or not JSON', async () => {
    const batch = { method: 'post', path: BATCH };
    const big = JSON.stringify({ emails: ['a'.repeat(70_000)] });
    await expectDocumented(main, batch, BATCH, { key: main.key, method: 'POST', headers: JSON_TYPE, body: big }, 413);
    await expectDocumented(
      main,
      batch,
      BATCH,
      { key: main.key, method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'email\na@b.co' },
      415,
    );
  });

  it('429: each metered route over a limit of 1 call per minute', async () => {
    const limits = {
      RATE_LIMIT_EMAIL_VERIFY_BATCH: '1',
      RATE_LIMIT_EMAIL_VERIFY_SINGLE: '1',
      RATE_LIMIT_QR_GENERATE: '1',
      RATE_LIMIT_QR_WIFI: '1',
    };
    const limited = await start({ env: limits });
    for (const route of JOB_ROUTES) {
      const [url, init] = request(route, limited.key, 'bad');
      await expectDocumented(limited, route, url, init, 400);
      const response = await expectDocumented(limited, route, url, init, 429);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    }
  });

  it('503: no worker can take the job', async () => {
    const nobody = await start({ handlers: [] });
    for (const route of JOB_ROUTES) {
      const [url, init] = request(route, nobody.key, 'good');
      const response = await expectDocumented(nobody, route, url, init, 503);
      expect(response.headers.get('retry-after')).toBe('5');
    }
  });

  it('504: the worker does not answer within the request deadline', async () => {
    const slow = await start({
      env: { REQUEST_DEADLINE_MS: '300' },
      handlers: [registerHandler(QR_JOB, hang), registerHandler(VERIFY_JOB, hang)],
    });
    for (const route of JOB_ROUTES) {
      const [url, init] = request(route, slow.key, 'good');
      await expectDocumented(slow, route, url, init, 504);
    }
  });

  it('500: the worker fails', async () => {
    const broken = await start({ handlers: [registerHandler(QR_JOB, fail), registerHandler(VERIFY_JOB, fail)] });
    for (const route of JOB_ROUTES) {
      const [url, init] = request(route, broken.key, 'good');
      const response = await expectDocumented(broken, route, url, init, 500);
      expect(response.text).not.toContain('renderer crashed');
    }
  });
});
