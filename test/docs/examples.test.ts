/**
 * Every example the service documents says what the service answers (issue 20): each response
 * example of /openapi.json and each JSON example of docs/*.md is compared with a real answer of a
 * running gateway to the same request, for its keys, its nulls, its types and its codes
 * (test/support/example-shape.ts). The mail world is scripted so that the examples' own addresses
 * get the examples' verdicts: example.com accepts ann, example.org accepts anything, gmial.com
 * does not exist. An example with no real answer to compare with fails the test, so a new one
 * cannot drift unseen.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { QR_JOB, VERIFY_JOB } from '@svc/contracts';
import { registerHandler, type JobContext } from '@svc/jobs';
import { findFreePort, startDnsServer, startSmtpServer, waitUntil, type RigDnsServer, type RigSmtpServer } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../lifecycle/raw-http.ts';
import { connect } from '../mcp/mcp-client.ts';
import { call, startServer, type TestServer } from '../support/servers.ts';
import { normaliseMessage, shapeProblems } from '../support/example-shape.ts';
import { startListServer, waitForStatus, type ListServer } from '../lists/harness.ts';

const JSON_TYPE = { 'content-type': 'application/json' };
const LISTS = '/v1/email-verify/lists';

interface Media {
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
type Document = { paths: Record<string, Record<string, Operation>> };

/** Real answers, by what they are an answer to. */
const answers = new Map<string, unknown>();
/** Real error bodies, by `operationId code` and by code alone. */
const errors = new Map<string, Array<Record<string, unknown>>>();

const hang = (_payload: unknown, context: JobContext): Promise<never> =>
  new Promise((_resolve, reject) => context.signal.addEventListener('abort', () => setTimeout(() => reject(new Error('gave up')), 200)));
const fail = (): Promise<never> => Promise.reject(new Error('the renderer crashed'));

let dns: RigDnsServer;
const smtp: RigSmtpServer[] = [];
let main: ListServer;
const others: TestServer[] = [];
let document: Document;

async function startRig(): Promise<Record<string, string>> {
  dns = await startDnsServer({
    'example.com': {
      MX: [
        [10, 'mx1.example.com'],
        [20, 'mx2.example.com'],
      ],
    },
    'mx1.example.com': { A: ['127.0.0.61'] },
    'mx2.example.com': { A: ['127.0.0.61'] },
    'example.org': { MX: [[10, 'mx.example.org']] },
    'mx.example.org': { A: ['127.0.0.62'] },
    'slow.test': { MX: [[10, 'mx.slow.test']] },
    'mx.slow.test': { A: ['127.0.0.63'] },
  });
  const port = await findFreePort(['127.0.0.61', '127.0.0.62', '127.0.0.63']);
  smtp.push(
    await startSmtpServer({ host: '127.0.0.61', port, users: ['ann@example.com', 'alice@example.com'] }),
    await startSmtpServer({ host: '127.0.0.62', port, users: [], catchAll: true }),
    // One RCPT at a time, 150 ms each: a list of these is still running when it is read.
    await startSmtpServer({ host: '127.0.0.63', port, users: [], pipelining: false, replyDelayMs: 150 }),
  );
  return { ...dns.canaryEnv, VERIFY_DNS_SERVERS: dns.address, VERIFY_SMTP_PORT: String(port), VERIFY_ALLOW_PRIVATE_MX: 'true' };
}

function recordError(operationId: string, body: unknown): void {
  const error = body as Record<string, unknown>;
  for (const key of [`${operationId} ${String(error.error)}`, String(error.error)]) errors.set(key, [...(errors.get(key) ?? []), error]);
}

async function json(server: { baseUrl: string }, path: string, init: RequestInit & { key?: string | null }, status: number) {
  const response = await call(server, path, init);
  expect(response.status, `${init.method ?? 'GET'} ${path}: ${response.text.slice(0, 300)}`).toBe(status);
  return response;
}

/** The requests whose answers the examples show, and the refusals they name. */
async function collectAnswers(): Promise<void> {
  const key = main.key;
  const post = (body: unknown) => ({ key, method: 'POST', headers: JSON_TYPE, body: JSON.stringify(body) });
  const csv = (body: string) => ({ key, method: 'POST', headers: { 'content-type': 'text/csv' }, body });
  const operation = (id: string) =>
    Object.values(document.paths)
      .flatMap((operations) => Object.values(operations))
      .find((candidate) => candidate.operationId === id)!;

  // Successes, sent as the examples' own requests where the document has one.
  const batchRequest = operation('verifyEmailBatch').requestBody!.content['application/json']!.example;
  answers.set('batch', (await json(main, '/v1/email-verify/verify/batch', post(batchRequest), 200)).json());
  answers.set('single', (await json(main, '/v1/email-verify/verify?email=sales%40example.org', { key }, 200)).json());
  answers.set('svg hello', (await json(main, '/v1/qr/qr?data=hello&scale=4', { key }, 200)).text);
  answers.set('matrix hello', (await json(main, '/v1/qr/qr?data=hello&format=json', { key }, 200)).json());
  answers.set('wifi svg', (await json(main, '/v1/qr/wifi?ssid=Home&password=correct-horse', { key }, 200)).text);
  answers.set('wifi matrix', (await json(main, '/v1/qr/wifi?ssid=Home&password=correct-horse&format=json', { key }, 200)).json());
  const qr = await connect({ ...main, prefix: '', revokedKey: '', metricsUrl: '' }, 'qr');
  answers.set('tool qr_generate hello', await qr.callTool('qr_generate', { data: 'hello' }));
  await qr.close();

  const csvRequest = operation('createList').requestBody!.content['text/csv']!.example as string;
  const csvList = (
    await json(main, LISTS, { key, method: 'POST', headers: { 'content-type': 'text/csv' }, body: csvRequest }, 202)
  ).json() as { id: string };
  await waitForStatus(main, key, csvList.id, ['completed']);
  answers.set('list results csv', (await json(main, `${LISTS}/${csvList.id}/results?format=csv`, { key }, 200)).text);

  // A list still running: its first chunk (the examples' addresses and fillers at example.com) settles, the slow rest does not.
  const fillers = Array.from({ length: 95 }, (_, i) => `filler${i}@example.com`);
  const slow = Array.from({ length: 150 }, (_, i) => `s${i}@slow.test`);
  // Uploaded as CSV, as the examples show it: the list object then names its column and encoding.
  const csvBody = ['email', 'ann@example.com', 'bob@gmial.com', ...fillers, ...slow].join('\n');
  const running = (await json(main, `${LISTS}?name=crm%20export`, csv(csvBody), 202)).json() as { id: string };
  const settled = async () => ((await json(main, `${LISTS}/${running.id}`, { key }, 200)).json() as { processed: number }).processed >= 97;
  await waitUntil(settled, 15_000, 'the first chunk of the running list');
  answers.set('list page', (await json(main, `${LISTS}?limit=1`, { key }, 200)).json());
  // The one list worker is busy with the slow chunks: a list created now is answered queued, as the example shows it.
  answers.set('list created', (await json(main, `${LISTS}?name=crm%20export`, csv(csvRequest), 202)).json());
  answers.set('list running', (await json(main, `${LISTS}/${running.id}`, { key }, 200)).json());
  answers.set('list results running', (await json(main, `${LISTS}/${running.id}/results`, { key }, 200)).json());
  answers.set('list finished', (await json(main, `${LISTS}/${csvList.id}/finish`, { key, method: 'POST' }, 200)).json());
  answers.set('list cancelled', (await json(main, `${LISTS}/${running.id}`, { key, method: 'DELETE' }, 200)).json());
  answers.set('usage', (await json(main, '/v1/usage', { key }, 200)).json());
  const feedbackRequest = operation('reportFeedback').requestBody!.content['application/json']!.example;
  answers.set('feedback', (await json(main, '/v1/email-verify/feedback', post(feedbackRequest), 200)).json());
  answers.set(
    'feedback webhook',
    (
      await json(
        main,
        '/v1/email-verify/feedback/postmark',
        post({ RecordType: 'Delivery', Recipient: 'bob@example.com', DeliveredAt: '2026-11-20T10:00:00Z' }),
        200,
      )
    ).json(),
  );
  await json(main, '/v1/email-verify/verify?email=ann%40example.com', { key }, 200);
  answers.set('history', (await json(main, '/v1/email-verify/history?email=ann%40example.com', { key }, 200)).json());

  // Refusals, each as the example that shows it was caused.
  const refusals: Array<[string, string, RequestInit & { key?: string | null }, number]> = [
    ['generateQrCode', '/v1/qr/qr?data=x&scale=41', { key }, 400],
    ['generateQrCode', `/v1/qr/qr?data=${'a'.repeat(214)}`, { key }, 400],
    ['generateWifiQrCode', '/v1/qr/wifi?ssid=Home', { key }, 400],
    ['generateQrCode', '/v1/qr/qr?data=x', { key: `sk_${'0'.repeat(32)}` }, 401],
    ['generateQrCode', '/v1/qr/qr?data=x', { key: null }, 401],
    ['generateQrCode', '/v1/qr/qr', { key, method: 'POST' }, 405],
    ['verifyEmailBatch', '/v1/email-verify/verify/batch', post({ emails: 'ann@example.com' }), 400],
    ['verifyEmailBatch', '/v1/email-verify/verify/batch', post({ emails: Array(101).fill('a@b.co') }), 400],
    ['verifyEmailBatch', '/v1/email-verify/verify/batch', post({ emails: ['a'.repeat(70_000)] }), 413],
    [
      'verifyEmailBatch',
      '/v1/email-verify/verify/batch',
      { key, method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'a@b.co' },
      415,
    ],
    ['verifyEmail', '/v1/email-verify/verify?email=', { key }, 400],
    ['createList', LISTS, post({ emails: [] }), 400],
    ['createList', LISTS, post({ emails: Array.from({ length: 100_001 }, (_, i) => `a${i}@b.co`) }), 400],
    ['createList', LISTS, post({ emails: ['a@b.co'], callbackUrl: 'http://10.0.0.1/' }), 400],
    ['createList', LISTS, { key, method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'a@b.co' }, 415],
    ['createList', LISTS, csv('Name,Phone\nAnn,555 0100\nBob,555 0101\n'), 400],
    ['createList', LISTS, csv('a\u0000b\n'), 400],
    ['createList', `${LISTS}?column=Mail`, csv('Name,Email\nAnn,ann@example.com\n'), 400],
    [
      'createList',
      LISTS,
      { key, method: 'POST', headers: { 'content-type': 'text/csv' }, body: `email\n${'x'.repeat(17 * 1024 * 1024)}\n` },
      413,
    ],
    ['listLists', `${LISTS}?limit=0`, { key }, 400],
    ['getListResults', `${LISTS}/lst_5f0c3a9d8e7b6a5f4e3d2c1b/results?format=xml`, { key }, 400],
    ['getList', `${LISTS}/lst_5f0c3a9d8e7b6a5f4e3d2c1b`, { key }, 404],
    ['reportFeedback', '/v1/email-verify/feedback', post({ events: [] }), 400],
    ['reportFeedbackWebhook', '/v1/email-verify/feedback/sendgrid', post({ email: 'ann@example.com' }), 400],
    ['reportFeedbackWebhook', '/v1/email-verify/feedback/sparkpost', post([]), 404],
    ['getAddressHistory', '/v1/email-verify/history?email=nope', { key }, 400],
  ];
  for (const [operationId, path, init, status] of refusals) recordError(operationId, (await json(main, path, init, status)).json());
  // Three lists running: a fourth is refused.
  const busy = await main.freshKey();
  const slowList = (tag: string) => ({
    key: busy,
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ emails: [`${tag}@slow.test`, `${tag}x@slow.test`] }),
  });
  for (const tag of ['a', 'b', 'c']) await json(main, LISTS, slowList(tag), 202);
  recordError('createList', (await json(main, LISTS, slowList('d'), 429)).json());
  const huge = await rawRequest(main.baseUrl, `GET /v1/qr/qr?data=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  recordError('generateQrCode', JSON.parse(huge.body));

  // A gateway whose workers fail or hang, and one with none at all and a limit of one call.
  const broken = await startServer('embedded', {
    env: { REQUEST_DEADLINE_MS: '300' },
    handlers: [registerHandler(QR_JOB, fail), registerHandler(VERIFY_JOB, hang)],
  });
  const nobody = await startServer('embedded', { env: { RATE_LIMIT_QR_GENERATE: '1' }, handlers: [] });
  const full = await startServer('embedded', { env: { LIST_MAX_STORED_ROWS_PER_KEY: '2' } });
  others.push(broken, nobody, full);
  const threeRows = { key: full.key, method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ emails: ['a@b.co', 'a@b.co', 'c@d.co'] }) };
  recordError('createList', (await json(full, LISTS, threeRows, 429)).json());
  recordError('generateQrCode', (await json(broken, '/v1/qr/qr?data=x', { key: broken.key }, 500)).json());
  recordError('verifyEmail', (await json(broken, '/v1/email-verify/verify?email=a%40b.co', { key: broken.key }, 504)).json());
  recordError('generateQrCode', (await json(nobody, '/v1/qr/qr?data=x', { key: nobody.key }, 503)).json());
  recordError('generateQrCode', (await json(nobody, '/v1/qr/qr?data=x', { key: nobody.key }, 429)).json());
}

beforeAll(async () => {
  const env = await startRig();
  main = await startListServer('embedded', {
    ...env,
    LIST_RETRY_DELAYS_S: '',
    RATE_LIMIT_EMAIL_VERIFY_LIST: '1000',
    // One chunk at a time, so that a list created while the slow one runs is answered queued.
    LIST_WORKER_CONCURRENCY: '1',
  });
  document = (await call(main, '/openapi.json')).json() as Document;
  await collectAnswers();
}, 60_000);
afterAll(async () => {
  await Promise.all(others.map((server) => server.close()));
  await main?.close();
  await Promise.all([dns?.close(), ...smtp.map((server) => server.close())]);
});

/** What an error example must match: a real refusal of its operation with its code, else of its code anywhere. */
function errorProblems(example: Record<string, unknown>, operationId: string): string[] {
  const code = String(example.error);
  const candidates = [...(errors.get(`${operationId} ${code}`) ?? []), ...(errors.get(code) ?? [])];
  if (candidates.length === 0) return [`no real ${code} answer to compare with`];
  const attempts = candidates.map((real) => shapeProblems(example, real));
  return attempts.find((problems) => problems.length === 0) ?? attempts[0]!;
}

/** The real answer a success example of an operation shows. */
const SUCCESS: Record<string, string> = {
  'generateQrCode image/svg+xml': 'svg hello',
  'generateQrCode application/json': 'matrix hello',
  'generateWifiQrCode image/svg+xml': 'wifi svg',
  'generateWifiQrCode application/json': 'wifi matrix',
  'verifyEmailBatch application/json': 'batch',
  'verifyEmail application/json': 'single',
  'createList application/json': 'list created',
  'listLists application/json': 'list page',
  'getList application/json': 'list running',
  'cancelList application/json': 'list cancelled',
  'finishList application/json': 'list finished',
  'getListResults application/json': 'list results running',
  'getListResults text/csv': 'list results csv',
  'getUsage application/json': 'usage',
  'reportFeedback application/json': 'feedback',
  'reportFeedbackWebhook application/json': 'feedback webhook',
  'getAddressHistory application/json': 'history',
};

function successProblems(example: unknown, answerKey: string): string[] {
  if (!answers.has(answerKey)) return [`no real answer "${answerKey}" to compare with`];
  const real = answers.get(answerKey);
  // The QR examples are real codes of `hello`: the very bytes.
  if (answerKey === 'svg hello' || answerKey === 'matrix hello')
    return JSON.stringify(example) === JSON.stringify(real) ? [] : ['not the answer, byte for byte'];
  if (answerKey === 'wifi svg') return typeof example === 'string' && example.startsWith('<svg') ? [] : ['not an SVG'];
  if (answerKey === 'list results csv')
    return example === real ? [] : [`example ${JSON.stringify(example)}, answered ${JSON.stringify(real)}`];
  return shapeProblems(example, real);
}

describe('the OpenAPI examples', () => {
  it('each response example matches a real answer (keys, nulls, types, codes; error messages)', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const operations of Object.values(document.paths)) {
      for (const operation of Object.values(operations)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          for (const [mediaType, media] of Object.entries(response.content ?? {})) {
            const shown = [
              ...(media.example === undefined ? [] : [['example', media.example] as const]),
              ...Object.entries(media.examples ?? {}).map(([name, { value }]) => [name, value] as const),
            ];
            for (const [name, example] of shown) {
              checked += 1;
              const found =
                Number(status) >= 400
                  ? errorProblems(example as Record<string, unknown>, operation.operationId)
                  : successProblems(example, SUCCESS[`${operation.operationId} ${mediaType}`] ?? '?');
              problems.push(...found.map((problem) => `${operation.operationId} ${status} ${mediaType} ${name}: ${problem}`));
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(90);
  });
});

/** The JSON blocks of the docs, each classified by what it shows; a block that is none of these fails. */
function classify(block: Record<string, unknown>): string | undefined {
  const keys = Object.keys(block).sort().join(',');
  if ('mcpServers' in block) return 'client configuration';
  if ('error' in block && 'message' in block) return 'error';
  const byKeys: Record<string, string> = {
    'count,results,summary': 'batch',
    'checks,email,reason,score,verdict': 'single',
    'checks,email,probability,reason,score,verdict': 'single',
    'ecc,margin,modules,size,version': 'matrix hello',
    'allowances,operations,period,totalCostUsd': 'usage',
    'count,id,pending,results,status': 'list results running',
    '_meta,content,structuredContent': 'tool qr_generate hello',
    'email,events,verifications': 'history',
    'accepted,ignored': 'feedback',
  };
  if (byKeys[keys] !== undefined) return byKeys[keys];
  if ('distinct' in block && 'processed' in block)
    return `list ${block.status === 'queued' ? 'created' : block.status === 'cancelled' ? 'cancelled' : 'running'}`;
  return undefined;
}

const DOCS = [
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  'README.md',
];

describe('the JSON examples of the docs', () => {
  it.each(DOCS)('%s', (file) => {
    const text = readFileSync(file, 'utf8');
    const problems: string[] = [];
    for (const match of text.matchAll(/```json\n([\s\S]*?)```/g)) {
      const line = text.slice(0, match.index).split('\n').length + 1;
      const where = `${file}:${line}`;
      let block: Record<string, unknown>;
      try {
        block = JSON.parse(match[1]!) as Record<string, unknown>;
      } catch (error) {
        problems.push(`${where}: not JSON (${String(error)})`);
        continue;
      }
      const shows = classify(block);
      if (shows === undefined) problems.push(`${where}: shows no answer this test knows; teach classify() what it is`);
      else if (shows === 'error') problems.push(...errorProblems(block, '').map((problem) => `${where}: ${problem}`));
      else if (shows !== 'client configuration')
        problems.push(...shapeProblems(block, answers.get(shows)).map((problem) => `${where} (${shows}): ${problem}`));
    }
    for (const match of text.matchAll(/```xml\n([\s\S]*?)\n```/g)) {
      problems.push(...shapeProblems(match[1], answers.get('svg hello')).map((problem) => `${file} (svg): ${problem}`));
    }
    expect(problems).toEqual([]);
  });

  it('error messages compare with their numbers and ids blanked only', () => {
    expect(normaliseMessage('retry in 42 s; quote 7d0b6c1e-4c1f-4d2a-9f0e-2b1f0c9a7e55')).toBe('retry in <n> s; quote <id>');
  });
});
