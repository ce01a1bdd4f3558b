/**
 * Arbitraries for hostile HTTP requests: any method, any route or a mutation of one, query
 * strings of arbitrary text (lone surrogates, control characters, broken percent escapes, huge
 * values), arbitrary headers, and bodies from arbitrary JSON (deeply nested too) to batch- and
 * JSON-RPC-shaped ones with arbitrary entries and arguments. Serialised byte for byte, so that
 * nothing a client library would refuse is left out.
 */
import fc from 'fast-check';
import { unicodeText } from '@svc/testkit/properties';

export interface HostileRequest {
  method: string;
  target: string;
  headers: Array<[string, string]>;
  body: string | undefined;
  /** Leave out the Host header (an HTTP/1.1 request must carry one: 400 in the contract's format). */
  withoutHost?: boolean;
}

export const ROUTES = [
  '/v1/qr/qr',
  '/v1/qr/wifi',
  '/v1/email-verify/verify',
  '/v1/email-verify/verify/batch',
  '/v1/usage',
  '/api/mcp/qr',
  '/api/mcp/email-verify',
  '/healthz',
  '/readyz',
  '/openapi.json',
] as const;
export const METERED_PATHS = new Set([
  '/v1/qr/qr',
  '/v1/qr/wifi',
  '/v1/email-verify/verify',
  '/v1/email-verify/verify/batch',
  '/api/mcp/qr',
  '/api/mcp/email-verify',
]);

const PARAMS = ['data', 'format', 'scale', 'margin', 'dark', 'light', 'ssid', 'password', 'security', 'hidden', 'email', 'key', 'emails'];
const TOOLS = ['qr_generate', 'qr_wifi', 'email-verify_verify', 'email-verify_verify-batch'];

/** Text of every kind: lone surrogates, controls, emoji, right-to-left marks, long runs. */
const anyText = fc.oneof(
  unicodeText({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', '\udfff', '\u202e', '\ufeff', '#000', '%', '😀'.repeat(300), 'a'.repeat(900)),
  fc.integer().map(String),
  fc.double().map(String),
);

/** Every UTF-8 byte percent-encoded except the unreserved ones (lone surrogates become U+FFFD, as any client sends them). */
function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9._~-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const queryValue = fc.oneof(
  { weight: 4, arbitrary: anyText.map(percentEncode) },
  { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%f', '%ff%fe', '%00', '%2523000', '%ED%A0%80', '+', '%20%20') },
  { weight: 1, arbitrary: fc.stringMatching(/^[\x21-\x7e]{0,30}$/).map((text) => text.replace(/[#&]/g, '')) },
);
const queryString = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...PARAMS), anyText.map(percentEncode)), fc.option(queryValue, { nil: undefined })), {
    maxLength: 6,
  })
  .map((pairs) => pairs.map(([name, value]) => (value === undefined ? name : `${name}=${value}`)).join('&'));

const path = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ROUTES) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...ROUTES), fc.constantFrom('/', '//', '/..', '/%2e%2e', '%00', '/x', ';a=b', '/%ff'))
      .map(([route, tail]) => route + tail),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('/', '//v1/qr/qr', '/v1/../v1/qr/qr', '/V1/QR/QR', '/docs', '/metrics', '/v1/', '/api/mcp', '*'),
  },
  { weight: 1, arbitrary: anyText.map((text) => `/${percentEncode(text)}`) },
);

const target = fc
  .tuple(path, fc.option(queryString, { nil: undefined }))
  .map(([base, query]) => (query === undefined ? base : `${base}?${query}`));

const method = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS') },
  { weight: 1, arbitrary: fc.constantFrom('TRACE', 'PROPFIND', 'SEARCH', 'CONNECT', 'FROB', 'get', 'G ET', '') },
);

/** Header values without CR or LF (those end the header, which the malformed-request tests cover). */
const headerValue = fc.oneof(
  fc.string({ maxLength: 60 }).map((text) => text.replace(/[\r\n]/g, '')),
  unicodeText({ maxLength: 30 }).map((text) => text.replace(/[\r\n]/g, '')),
);

const jsonRpc = fc.record(
  {
    jsonrpc: fc.constantFrom('2.0', '1.0', 2),
    id: fc.oneof(fc.nat(), fc.string({ maxLength: 8 }), fc.constant(null), fc.object({ maxDepth: 1 })),
    method: fc.oneof(
      fc.constantFrom('tools/call', 'tools/list', 'initialize', 'ping', 'notifications/cancelled'),
      fc.string({ maxLength: 12 }),
    ),
    params: fc.oneof(
      fc.record({
        name: fc.oneof(fc.constantFrom(...TOOLS), fc.string({ maxLength: 20 })),
        arguments: fc.oneof(
          fc.dictionary(
            fc.constantFrom(...PARAMS),
            fc.oneof(anyText, fc.integer(), fc.double(), fc.boolean(), fc.array(anyText, { maxLength: 120 })),
          ),
          fc.jsonValue({ maxDepth: 4 }),
        ),
      }),
      fc.jsonValue({ maxDepth: 3 }),
    ),
  },
  { requiredKeys: ['jsonrpc', 'method'] },
);

const emailEntry = fc.oneof(
  anyText,
  fc.emailAddress(),
  fc.constantFrom('ann@fuzz.test', 'nobody@fuzz.test', ' Ann@FUZZ.test ', 'ann@gmial.com', '\ud800@b.com'),
);
const batchBody = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ emails: fc.array(emailEntry, { minLength: 1, maxLength: 100 }) }).map((value) => JSON.stringify(value)),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ emails: fc.oneof(fc.array(emailEntry, { maxLength: 130 }), fc.jsonValue({ maxDepth: 3 })) }, { requiredKeys: [] })
      .map((value) => JSON.stringify(value)),
  },
);
const rpcBody = fc.oneof(jsonRpc, fc.array(jsonRpc, { maxLength: 3 })).map((value) => JSON.stringify(value));

const body = fc.oneof(
  { weight: 3, arbitrary: batchBody },
  { weight: 3, arbitrary: rpcBody },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 5_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) },
  { weight: 1, arbitrary: anyText },
  { weight: 1, arbitrary: fc.constant('x'.repeat(70 * 1024)) },
);

/** Header values a client library would send, and now and then anything without CR or LF. */
const plainHeaderValue = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);
const mixedHeaderValue = fc.oneof({ weight: 5, arbitrary: plainHeaderValue }, { weight: 1, arbitrary: headerValue });

/** What each route takes, so that most requests get past the parser and into the handlers. */
const AIMED: Array<{ method: string; path: string; params: string[]; body?: fc.Arbitrary<string> }> = [
  { method: 'GET', path: '/v1/qr/qr', params: ['data', 'format', 'scale', 'margin', 'dark', 'light'] },
  { method: 'GET', path: '/v1/qr/wifi', params: ['ssid', 'password', 'security', 'hidden', 'format', 'scale', 'margin', 'dark', 'light'] },
  { method: 'GET', path: '/v1/email-verify/verify', params: ['email'] },
  { method: 'GET', path: '/v1/usage', params: [] },
  { method: 'POST', path: '/v1/email-verify/verify/batch', params: [], body: batchBody },
  { method: 'POST', path: '/api/mcp/qr', params: [], body: rpcBody },
  { method: 'POST', path: '/api/mcp/email-verify', params: [], body: rpcBody },
];

function aimedRequest(key: string): fc.Arbitrary<HostileRequest> {
  return fc.constantFrom(...AIMED).chain((route) =>
    fc
      .record({
        query: fc.array(
          fc.tuple(
            fc.oneof(
              { weight: 5, arbitrary: fc.constantFrom(...(route.params.length > 0 ? route.params : PARAMS)) },
              { weight: 1, arbitrary: fc.constantFrom(...PARAMS) },
            ),
            queryValue,
          ),
          { maxLength: route.params.length + 1 },
        ),
        body: route.body ?? fc.constant(undefined),
        authorization: fc.oneof(
          { weight: 9, arbitrary: fc.constantFrom(`Bearer ${key}`, `bearer ${key}`, `BEARER   ${key}`) },
          { weight: 1, arbitrary: mixedHeaderValue },
        ),
        extra: fc.array(fc.tuple(fc.stringMatching(/^X-[A-Za-z0-9-]{1,12}$/), plainHeaderValue), { maxLength: 2 }),
      })
      .map(({ query, body, authorization, extra }): HostileRequest => ({
        method: route.method,
        target: query.length === 0 ? route.path : `${route.path}?${query.map(([name, value]) => `${name}=${value}`).join('&')}`,
        headers: [
          ['Authorization', authorization],
          ...(body === undefined ? [] : [['Content-Type', 'application/json'] as [string, string]]),
          ['Accept', 'application/json, text/event-stream'],
          ...extra,
        ],
        body,
      })),
  );
}

function anyRequest(key: string): fc.Arbitrary<HostileRequest> {
  const authorization = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(`Bearer ${key}`, `bearer ${key}`, `BEARER   ${key}`) },
    { weight: 1, arbitrary: fc.constantFrom('Bearer', 'Bearer sk_00000000000000000000000000000000', 'Basic YTpi', `Bearer ${key} extra`) },
    { weight: 1, arbitrary: mixedHeaderValue },
  );
  const contentType = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        '',
      ),
    },
    { weight: 1, arbitrary: mixedHeaderValue },
  );
  const headerName = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9-]{1,20}$/),
    fc.constantFrom(
      'Expect',
      'Transfer-Encoding',
      'Content-Encoding',
      'Upgrade',
      'Connection',
      'Range',
      'X-Forwarded-For',
      'Cookie',
      'Origin',
    ),
  );
  const extra = fc.array(fc.tuple(headerName, mixedHeaderValue), { maxLength: 4 });
  return fc
    .record({
      method,
      target,
      authorization: fc.option(authorization, { nil: undefined, freq: 8 }),
      contentType: fc.option(contentType, { nil: undefined, freq: 4 }),
      accept: fc.option(fc.constantFrom('application/json, text/event-stream', 'application/json', '*/*', 'text/html'), {
        nil: undefined,
        freq: 3,
      }),
      requestId: fc.option(mixedHeaderValue, { nil: undefined, freq: 3 }),
      extra,
      body: fc.option(body, { nil: undefined, freq: 3 }),
      withoutHost: fc.integer({ min: 0, max: 9 }).map((draw) => draw === 0),
    })
    .map((parts): HostileRequest => ({
      method: parts.method,
      target: parts.target,
      headers: [
        ...(parts.authorization === undefined ? [] : [['Authorization', parts.authorization] as [string, string]]),
        ...(parts.contentType === undefined ? [] : [['Content-Type', parts.contentType] as [string, string]]),
        ...(parts.accept === undefined ? [] : [['Accept', parts.accept] as [string, string]]),
        ...(parts.requestId === undefined ? [] : [['X-Request-Id', parts.requestId] as [string, string]]),
        ...parts.extra,
      ],
      body: parts.body,
      withoutHost: parts.withoutHost,
    }));
}

/** Two thirds aimed at a route (its method, its parameters, a body of its shape, a good key), a third anything at all. */
export const hostileRequest = (key: string): fc.Arbitrary<HostileRequest> =>
  fc.oneof({ weight: 2, arbitrary: aimedRequest(key) }, { weight: 1, arbitrary: anyRequest(key) });

/** The request as bytes on the wire: Host (unless left out), the headers, Content-Length for a body, Connection: close. */
export function serialise(request: HostileRequest): Buffer {
  const body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
  const lines = [
    `${request.method} ${request.target} HTTP/1.1`,
    ...(request.withoutHost === true ? [] : ['Host: fuzz']),
    ...request.headers.map(([name, value]) => `${name}: ${value}`),
    ...(body === undefined ? [] : [`Content-Length: ${body.length}`]),
    'Connection: close',
  ];
  // Header text goes out as latin1, as Node writes and parses it; the body as UTF-8.
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body ?? Buffer.alloc(0)]);
}
