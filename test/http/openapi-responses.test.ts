/**
 * Real responses of every documented route, successes and errors, conform to the gateway's own
 * /openapi.json: documented status, media type, body schema and headers. The errors are caused as
 * an operator or a caller would cause them: bad input, no key, wrong method, a body too large,
 * a rate limit of 1, no worker at all, a worker that hangs past the deadline, a worker that fails.
 * The list routes too: creation from JSON and CSV (202 with Location), reading, results in both
 * formats, cancelling, and their refusals (400, 401, 404, 405, 413, 415, 429).
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
const LISTS = '/v1/email-verify/lists';
const LIST = '/v1/email-verify/lists/{id}';
const LIST_RESULTS = '/v1/email-verify/lists/{id}/results';
const JSON_TYPE = { 'content-type': 'application/json' };
const CSV_TYPE = { 'content-type': 'text/csv' };

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
    main = await start({
      env: { ...rig.env, VERIFY_BATCH_DEADLINE_MS: '5000', VERIFY_RESULT_CACHE_TTL_S: '0', RATE_LIMIT_EMAIL_VERIFY_LIST: '100' },
    });
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
  describe('the list routes', () => {
    const createList = { method: 'post', path: LISTS };
    const listLists = { method: 'get', path: LISTS };
    const getList = { method: 'get', path: LIST };
    const getResults = { method: 'get', path: LIST_RESULTS };
    const cancelList = { method: 'delete', path: LIST };
    const post = (key: string | null, body: string, headers: Record<string, string> = JSON_TYPE) => ({
      key,
      method: 'POST',
      headers,
      body,
    });
    const listBody = JSON.stringify({ emails: ['ann@shop.test', 'nobody@shop.test', 'ann@gmial.com', 'not-an-address'], name: 'doc' });

    async function waitUntilEnded(server: TestServer, id: string): Promise<void> {
      await expect
        .poll(async () => (await call(server, `${LISTS}/${id}`, { key: server.key })).json(), { timeout: 20_000 })
        .toMatchObject({ status: 'completed' });
    }

    it('202, 200: create from JSON and from CSV, read, page, results as JSON and CSV, cancel', async () => {
      const created = await expectDocumented(main, createList, LISTS, post(main.key, listBody), 202);
      const { id } = created.json() as { id: string };
      expect(created.headers.get('location')).toBe(`${LISTS}/${id}`);
      expect(created.headers.get('x-service-cost')).toBe('0');
      const csv = await expectDocumented(
        main,
        createList,
        `${LISTS}?name=crm`,
        post(main.key, 'name;e-mail\r\nAnn;ann@shop.test\r\nNobody;nobody@shop.test\r\n', CSV_TYPE),
        202,
      );
      const csvId = (csv.json() as { id: string }).id;
      await waitUntilEnded(main, id);
      await waitUntilEnded(main, csvId);

      const list = await expectDocumented(main, getList, `${LISTS}/${id}`, { key: main.key }, 200);
      expect(list.json()).toMatchObject({ status: 'completed', count: 4, processed: 4 });
      const page = await expectDocumented(main, listLists, `${LISTS}?limit=1`, { key: main.key }, 200);
      expect((page.json() as { nextCursor: string | null }).nextCursor).not.toBeNull();
      const results = await expectDocumented(main, getResults, `${LISTS}/${id}/results`, { key: main.key }, 200);
      expect((results.json() as { results: Array<{ verdict: string }> }).results.map((result) => result.verdict)).toEqual([
        'deliverable',
        'undeliverable',
        'undeliverable',
        'undeliverable',
      ]);
      expect(results.headers.get('x-list-pending')).toBe('0');
      const csvResults = await expectDocumented(main, getResults, `${LISTS}/${csvId}/results?format=csv`, { key: main.key }, 200);
      expect(csvResults.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(csvResults.text.split('\n')[0]).toBe('name;e-mail;verdict;score;reason;did_you_mean');
      const cancelled = await expectDocumented(main, cancelList, `${LISTS}/${id}`, { key: main.key, method: 'DELETE' }, 200);
      expect(cancelled.json()).toMatchObject({ status: 'completed' }); // a list that ended stays as it ended
    });

    it('400, 404, 405, 413, 415: what each list route refuses', async () => {
      const key = main.key;
      const tooMany = await expectDocumented(
        main,
        createList,
        LISTS,
        post(key, JSON.stringify({ emails: Array.from({ length: 100_001 }, (_, i) => `a${i}@shop.test`) })),
        400,
      );
      expect(tooMany.json()).toMatchObject({ error: 'too_many_emails' });
      await expectDocumented(main, createList, LISTS, post(key, JSON.stringify({ emails: [] })), 400);
      await expectDocumented(
        main,
        createList,
        `${LISTS}?callbackUrl=http%3A%2F%2F10.0.0.1%2F`,
        post(key, 'email\na@b.co\n', CSV_TYPE),
        400,
      );
      await expectDocumented(main, listLists, `${LISTS}?limit=0`, { key }, 400);
      await expectDocumented(main, listLists, `${LISTS}?cursor=nonsense`, { key }, 400);
      await expectDocumented(main, getResults, `${LISTS}/lst_000000000000000000000000/results?format=xml`, { key }, 400);

      const unknown = 'lst_000000000000000000000000';
      await expectDocumented(main, getList, `${LISTS}/${unknown}`, { key }, 404);
      await expectDocumented(main, getList, `${LISTS}/not-an-id`, { key }, 404);
      await expectDocumented(main, getResults, `${LISTS}/${unknown}/results`, { key }, 404);
      await expectDocumented(main, cancelList, `${LISTS}/${unknown}`, { key, method: 'DELETE' }, 404);

      const wrongMethod = await expectDocumented(main, createList, LISTS, { key, method: 'PUT', headers: JSON_TYPE, body: '{}' }, 405);
      expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD, POST');

      const huge = `email\n${'x'.repeat(17 * 1024 * 1024)}\n`;
      await expectDocumented(main, createList, LISTS, post(key, huge, CSV_TYPE), 413);
      await expectDocumented(main, createList, LISTS, post(key, 'a@b.co', { 'content-type': 'text/plain' }), 415);
    });

    it('401: every list route without a key or with a revoked one', async () => {
      const cases: Array<[{ method: string; path: string }, string, RequestInit]> = [
        [createList, LISTS, { method: 'POST', headers: JSON_TYPE, body: listBody }],
        [listLists, LISTS, {}],
        [getList, `${LISTS}/lst_000000000000000000000000`, {}],
        [getResults, `${LISTS}/lst_000000000000000000000000/results`, {}],
        [cancelList, `${LISTS}/lst_000000000000000000000000`, { method: 'DELETE' }],
      ];
      for (const [operation, url, init] of cases) {
        for (const key of [null, main.revokedKey]) {
          const response = await expectDocumented(main, operation, url, { ...init, key }, 401);
          expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="api"/);
        }
      }
    });

    it("429: over the creation rate limit, and over the key's active lists", async () => {
      const limited = await start({ env: { ...rig.env, RATE_LIMIT_EMAIL_VERIFY_LIST: '1' } });
      await expectDocumented(limited, createList, LISTS, post(limited.key, JSON.stringify({ emails: [] })), 400);
      const rate = await expectDocumented(limited, createList, LISTS, post(limited.key, listBody), 429);
      expect(rate.headers.get('retry-after')).toMatch(/^\d+$/);

      // A server that never answers RCPT keeps the first list running.
      const busy = await start({ env: { ...rig.env, LIST_MAX_ACTIVE_PER_KEY: '1', VERIFY_COMMAND_TIMEOUT_MS: '5000' } });
      rig.smtp.script.tarpit = { at: 'rcpt' };
      try {
        const first = await expectDocumented(busy, createList, LISTS, post(busy.key, listBody), 202);
        const active = await expectDocumented(busy, createList, LISTS, post(busy.key, listBody), 429);
        expect(active.json()).toMatchObject({ error: 'rate_limited', details: { maxActiveLists: 1 } });
        expect(active.headers.get('retry-after')).toBe('30');
        const id = (first.json() as { id: string }).id;
        await expectDocumented(busy, cancelList, `${LISTS}/${id}`, { key: busy.key, method: 'DELETE' }, 200);
      } finally {
        delete rig.smtp.script.tarpit;
      }
    });
  });
});
