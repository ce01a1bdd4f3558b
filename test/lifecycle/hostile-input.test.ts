/**
 * Hostile input never breaks the contract (property-based, fast-check): arbitrary methods,
 * routes and mutations of them, query strings, headers, JSON and non-JSON bodies, deep nesting,
 * JSON-RPC envelopes and tool arguments, written byte for byte to a real listening gateway. Every
 * request gets an answer (no hang, no reset) that is not a 5xx, carries X-Request-Id, and, when
 * it is an error, has the body `{ error, message, details? }` with a code of the contract whose
 * status it is, a message for people, and X-Service-Cost 0 on a metered route. A failed tool
 * call inside a 200 carries the same error object. About two thousand requests: most in embedded
 * mode, a smaller run in distributed mode; the tallies by status and code are printed.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '@svc/contracts';
import { startMailRig, type MailRig } from '@svc/testkit';
import { propertyRuns } from '@svc/testkit/properties';
import { startServer, type Mode, type TestServer } from '../support/servers.ts';
import { METERED_PATHS, hostileRequest, serialise, type HostileRequest } from './hostile-requests.ts';
import { rawRequest, type RawResponse } from './raw-http.ts';

const RUNS: Record<Mode, number> = { embedded: propertyRuns(150), distributed: propertyRuns(40) };
/** Requests sent at once per run. */
const PER_RUN = 10;
const VALIDATOR_TEXT = /Invalid input|Invalid option|Invalid string|Too small|Too big|expected \w+, received|`(\w+)` `\1`/;

let rig: MailRig;
beforeAll(async () => {
  rig = await startMailRig('fuzz.test', '127.0.0.84', ['ann@fuzz.test']);
});
afterAll(async () => rig?.close());

interface ErrorBody {
  error: string;
  message: string;
  details?: unknown;
}

function describeRequest(request: HostileRequest): string {
  return JSON.stringify({ ...request, body: request.body?.slice(0, 300) }).slice(0, 1_000);
}

/** The contract's checks on one error object; returns its code. */
function checkErrorObject(value: unknown, status: number | undefined, where: string): string {
  expect(value, where).toBeTypeOf('object');
  const body = value as ErrorBody;
  expect(
    Object.keys(body).filter((key) => !['error', 'message', 'details'].includes(key)),
    where,
  ).toEqual([]);
  expect(Object.keys(ERROR_STATUS), where).toContain(body.error);
  if (status !== undefined) expect(ERROR_STATUS[body.error as keyof typeof ERROR_STATUS], where).toBe(status);
  expect(body.message, where).toBeTypeOf('string');
  expect(body.message.length, where).toBeGreaterThan(0);
  expect(body.message, where).not.toMatch(VALIDATOR_TEXT);
  if (body.details !== undefined) expect(body.details, where).toBeTypeOf('object');
  return body.error;
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    expect.fail(`not one JSON value: ${where}`);
  }
}

function checkResponse(request: HostileRequest, response: RawResponse, tally: Map<string, number>): void {
  const where = `${response.text.slice(0, 400)}\n<- ${describeRequest(request)}`;
  expect(response.status, where).toBeGreaterThanOrEqual(100);
  expect(response.status, where).toBeLessThan(500);
  expect(response.headers.get('x-request-id'), where).toBeTruthy();
  const path = request.target.split('?')[0] ?? '';
  let code = '';
  if (response.status >= 400 && request.method !== 'HEAD') {
    expect(response.headers.get('content-type'), where).toMatch(/^application\/json/);
    code = checkErrorObject(parseJson(response.body, where), response.status, where);
  }
  if (response.status >= 400 && METERED_PATHS.has(path)) expect(response.headers.get('x-service-cost'), where).toBe('0');
  // A tool result that failed carries the contract's error object as its text.
  if (response.status === 200 && path.startsWith('/api/mcp/') && response.body.startsWith('{')) {
    const rpc = parseJson(response.body, where) as { result?: { isError?: boolean; content?: Array<{ text?: string }> } };
    if (rpc.result?.isError === true)
      code = `tool:${checkErrorObject(parseJson(rpc.result.content?.[0]?.text ?? '', where), undefined, where)}`;
  }
  const label = `${response.status} ${request.method === 'HEAD' ? '(HEAD, no body)' : code === '' ? '(no error)' : code}`;
  tally.set(label, (tally.get(label) ?? 0) + 1);
}

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(mode, {
      env: {
        ...rig.env,
        VERIFY_BATCH_DEADLINE_MS: '1500',
        VERIFY_CONNECT_TIMEOUT_MS: '500',
        VERIFY_COMMAND_TIMEOUT_MS: '500',
        RATE_LIMIT_EMAIL_VERIFY_BATCH: '0',
        RATE_LIMIT_EMAIL_VERIFY_SINGLE: '0',
        RATE_LIMIT_QR_GENERATE: '0',
        RATE_LIMIT_QR_WIFI: '0',
      },
    });
  });
  afterAll(async () => server?.close());

  it(`${RUNS[mode] * PER_RUN} hostile requests: every answer within the contract`, { timeout: 120_000 }, async () => {
    const tally = new Map<string, number>();
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(fc.array(hostileRequest(server.key), { minLength: PER_RUN, maxLength: PER_RUN }), async (requests) => {
        const responses = await Promise.all(requests.map((request) => rawRequest(server.baseUrl, serialise(request), 15_000)));
        requests.forEach((request, index) => checkResponse(request, responses[index]!, tally));
      }),
      { numRuns: RUNS[mode] },
    );
    const sorted = [...tally].sort(([a], [b]) => a.localeCompare(b));
    const total = sorted.reduce((sum, [, count]) => sum + count, 0);
    console.log(
      `[hostile-input] ${mode}: ${total} requests in ${Date.now() - started} ms: ${sorted.map(([label, n]) => `${label}: ${n}`).join(', ')}`,
    );
  });
});
