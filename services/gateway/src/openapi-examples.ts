/**
 * Examples of the OpenAPI document: real answers of the service (the QR ones were rendered by
 * it for `data=hello`), which Redocly's linter checks against their schemas and
 * test/docs/examples.test.ts against the answers of a running gateway (keys, nulls, codes,
 * messages): a check that was not made is `null` here as in the answers.
 */
import type { ErrorBody } from '@svc/contracts';
import { encodeCursor } from '@svc/lists';

export const BATCH_REQUEST_EXAMPLE = { emails: ['ann@example.com', 'bob@gmial.com', 'not-an-address'] };

export const BATCH_RESPONSE_EXAMPLE = {
  count: 3,
  results: [
    {
      email: 'ann@example.com',
      score: 95,
      verdict: 'deliverable',
      reason: 'accepted_email',
      checks: {
        syntax: true,
        domainExists: true,
        mx: ['mx1.example.com', 'mx2.example.com'],
        smtp: 'accepted',
        catchAll: false,
        disposable: false,
        role: false,
        free: false,
        provider: null,
        history: null,
      },
    },
    {
      email: 'bob@gmial.com',
      score: 0,
      verdict: 'undeliverable',
      reason: 'invalid_domain',
      // No mail server to ask: smtp is null. gmial.com is on the disposable-domain list (a typo trap).
      checks: {
        syntax: true,
        domainExists: false,
        mx: [],
        smtp: null,
        catchAll: null,
        disposable: true,
        role: false,
        free: false,
        provider: null,
        history: null,
      },
      didYouMean: 'bob@gmail.com',
    },
    {
      email: 'not-an-address',
      score: 0,
      verdict: 'undeliverable',
      reason: 'invalid_syntax',
      // Bad syntax: nothing else was checked.
      checks: {
        syntax: false,
        domainExists: null,
        mx: null,
        smtp: null,
        catchAll: null,
        disposable: null,
        role: null,
        free: null,
        provider: null,
        history: null,
      },
    },
  ],
  summary: { deliverable: 1, risky: 0, undeliverable: 2 },
};

export const SINGLE_RESPONSE_EXAMPLE = {
  email: 'sales@example.org',
  score: 55,
  verdict: 'risky',
  reason: 'accept_all',
  probability: 0.75,
  checks: {
    syntax: true,
    domainExists: true,
    mx: ['mx.example.org'],
    smtp: 'accepted',
    catchAll: true,
    disposable: false,
    role: true,
    free: false,
    provider: null,
    history: null,
  },
};

/** `GET /v1/qr/qr?data=hello&scale=4`: version 1, 21 modules and a 4-module quiet zone, 116 px. */
export const SVG_EXAMPLE =
  '<svg xmlns="http://www.w3.org/2000/svg" width="116" height="116" viewBox="0 0 29 29" shape-rendering="crispEdges">' +
  '<rect width="29" height="29" fill="#ffffff"/><path fill="#000000" d="' +
  'M4 4h7v1h-7zM13 4h2v1h-2zM18 4h7v1h-7zM4 5h1v1h-1zM10 5h1v1h-1zM12 5h2v1h-2zM18 5h1v1h-1zM24 5h1v1h-1zM4 6h1v1h-1zM6 6h3v1h-3z' +
  'M10 6h1v1h-1zM13 6h1v1h-1zM15 6h2v1h-2zM18 6h1v1h-1zM20 6h3v1h-3zM24 6h1v1h-1zM4 7h1v1h-1zM6 7h3v1h-3zM10 7h1v1h-1zM14 7h2v1h-2z' +
  'M18 7h1v1h-1zM20 7h3v1h-3zM24 7h1v1h-1zM4 8h1v1h-1zM6 8h3v1h-3zM10 8h1v1h-1zM12 8h2v1h-2zM16 8h1v1h-1zM18 8h1v1h-1zM20 8h3v1h-3z' +
  'M24 8h1v1h-1zM4 9h1v1h-1zM10 9h1v1h-1zM16 9h1v1h-1zM18 9h1v1h-1zM24 9h1v1h-1zM4 10h7v1h-7zM12 10h1v1h-1zM14 10h1v1h-1z' +
  'M16 10h1v1h-1zM18 10h7v1h-7zM14 11h3v1h-3zM4 12h1v1h-1zM6 12h1v1h-1zM8 12h1v1h-1zM10 12h1v1h-1zM13 12h1v1h-1zM15 12h1v1h-1z' +
  'M20 12h1v1h-1zM23 12h1v1h-1zM6 13h1v1h-1zM8 13h2v1h-2zM14 13h1v1h-1zM18 13h1v1h-1zM23 13h2v1h-2zM5 14h1v1h-1zM7 14h1v1h-1z' +
  'M10 14h1v1h-1zM12 14h3v1h-3zM16 14h1v1h-1zM20 14h5v1h-5zM4 15h2v1h-2zM8 15h1v1h-1zM18 15h1v1h-1zM23 15h1v1h-1zM5 16h2v1h-2z' +
  'M8 16h1v1h-1zM10 16h2v1h-2zM14 16h1v1h-1zM16 16h1v1h-1zM18 16h1v1h-1zM20 16h1v1h-1zM12 17h4v1h-4zM17 17h1v1h-1zM19 17h1v1h-1z' +
  'M22 17h3v1h-3zM4 18h7v1h-7zM14 18h2v1h-2zM17 18h3v1h-3zM22 18h3v1h-3zM4 19h1v1h-1zM10 19h1v1h-1zM14 19h4v1h-4zM19 19h2v1h-2z' +
  'M4 20h1v1h-1zM6 20h3v1h-3zM10 20h1v1h-1zM12 20h1v1h-1zM14 20h2v1h-2zM17 20h3v1h-3zM23 20h2v1h-2zM4 21h1v1h-1zM6 21h3v1h-3z' +
  'M10 21h1v1h-1zM13 21h1v1h-1zM18 21h2v1h-2zM22 21h2v1h-2zM4 22h1v1h-1zM6 22h3v1h-3zM10 22h1v1h-1zM12 22h3v1h-3zM16 22h1v1h-1z' +
  'M20 22h1v1h-1zM22 22h1v1h-1zM24 22h1v1h-1zM4 23h1v1h-1zM10 23h1v1h-1zM13 23h1v1h-1zM18 23h1v1h-1zM20 23h1v1h-1zM23 23h1v1h-1z' +
  'M4 24h7v1h-7zM12 24h3v1h-3zM16 24h1v1h-1zM18 24h2v1h-2zM23 24h2v1h-2z"/></svg>';

/** `GET /v1/qr/qr?data=hello&format=json`, one string per row (1 = dark). */
const HELLO_ROWS = [
  '111111100110001111111',
  '100000101100001000001',
  '101110100101101011101',
  '101110100011001011101',
  '101110101100101011101',
  '100000100000101000001',
  '111111101010101111111',
  '000000000011100000000',
  '101010100101000010010',
  '001011000010001000011',
  '010100101110100011111',
  '110010000000001000010',
  '011010110010101010000',
  '000000001111010100111',
  '111111100011011100111',
  '100000100011110110000',
  '101110101011011100011',
  '101110100100001100110',
  '101110101110100010101',
  '100000100100001010010',
  '111111101110101100011',
];

export const MATRIX_EXAMPLE = {
  version: 1,
  ecc: 'M',
  size: 21,
  margin: 4,
  modules: HELLO_ROWS.map((row) => [...row].map(Number)),
};

export const USAGE_EXAMPLE = {
  period: '2026-11',
  operations: {
    'email-verify.batch': {
      calls: 12,
      billableCalls: 2,
      freeRemaining: 0,
      costUsd: '0.3',
      priceUsd: '0.15',
      allowanceFrom: 'email-verify.batch',
    },
    'email-verify.single': {
      calls: 40,
      billableCalls: 0,
      freeRemaining: 60,
      costUsd: '0',
      priceUsd: '0.003',
      allowanceFrom: 'email-verify.single',
    },
    'qr.generate': { calls: 1500, billableCalls: 500, freeRemaining: 0, costUsd: '0.25', priceUsd: '0.0005', allowanceFrom: 'qr.generate' },
    'qr.wifi': { calls: 3, billableCalls: 0, freeRemaining: 997, costUsd: '0', priceUsd: '0.0005', allowanceFrom: 'qr.wifi' },
    'email-verify.list': {
      calls: 115,
      billableCalls: 115,
      freeRemaining: 0,
      costUsd: '17.25',
      priceUsd: '0.15',
      allowanceFrom: 'email-verify.batch',
      addresses: 11_412,
    },
  },
  allowances: [
    { operations: ['email-verify.batch', 'email-verify.list'], allowance: 10, used: 127, remaining: 0 },
    { operations: ['email-verify.single'], allowance: 100, used: 40, remaining: 60 },
    { operations: ['qr.generate'], allowance: 1000, used: 1500, remaining: 0 },
    { operations: ['qr.wifi'], allowance: 1000, used: 3, remaining: 997 },
  ],
  totalCostUsd: '17.8',
};

/** One named example per error a response can carry. */
export type ErrorExamples = Record<string, ErrorBody>;

export const QR_PARAMETER_ERRORS: ErrorExamples = {
  invalid_parameter: { error: 'invalid_parameter', message: '`scale` must be from 1 to 40.', details: { param: 'scale' } },
  content_too_long: {
    error: 'content_too_long',
    message: '`data` does not fit a version 10 QR code at level M (about 213 bytes of text, 800 characters at most).',
    details: { param: 'data' },
  },
};

export const WIFI_PARAMETER_ERRORS: ErrorExamples = {
  invalid_parameter: {
    error: 'invalid_parameter',
    message: '`password` is required with security=WPA.',
    details: { param: 'password' },
  },
  content_too_long: QR_PARAMETER_ERRORS.content_too_long!,
};

export const BATCH_BODY_ERRORS: ErrorExamples = {
  invalid_request: {
    error: 'invalid_request',
    message: '`emails` must be an array of 1 to 100 address strings.',
    details: { path: '$.emails' },
  },
  too_many_emails: {
    error: 'too_many_emails',
    message: 'A batch may contain at most 100 addresses.',
    details: { path: '$.emails', max: 100 },
  },
};

export const SINGLE_QUERY_ERRORS: ErrorExamples = {
  invalid_parameter: { error: 'invalid_parameter', message: 'Give the address to verify as `email`.', details: { param: 'email' } },
};

export const ERROR_EXAMPLES = {
  unauthorized: { error: 'unauthorized', message: 'This API key is not valid.' },
  method_not_allowed: { error: 'method_not_allowed', message: 'POST is not allowed on /v1/qr/qr; use GET.' },
  payload_too_large: { error: 'payload_too_large', message: 'The request body is larger than 64 KiB.' },
  unsupported_media_type: { error: 'unsupported_media_type', message: 'Send the body as application/json.' },
  rate_limited: { error: 'rate_limited', message: 'Rate limit of 300 calls per 60 s exceeded; retry in 42 s.' },
  headers_too_large: {
    error: 'headers_too_large',
    message: 'The request line and headers exceed 16 KiB; send long content in a POST body where the operation takes one.',
  },
  internal_error: {
    error: 'internal_error',
    message: 'The job failed; quote request id 7d0b6c1e-4c1f-4d2a-9f0e-2b1f0c9a7e55 when reporting it.',
    details: { requestId: '7d0b6c1e-4c1f-4d2a-9f0e-2b1f0c9a7e55' },
  },
  service_unavailable: { error: 'service_unavailable', message: 'The service cannot take this job right now.' },
  timeout: { error: 'timeout', message: 'The job did not finish within the request deadline.' },
} satisfies ErrorExamples;

/** A list as `GET /v1/email-verify/lists/{id}` answers it while it runs (docs/lists.md, "The list object"). */
export const LIST_OBJECT_EXAMPLE = {
  id: 'lst_5f0c3a9d8e7b6a5f4e3d2c1b',
  name: 'crm export',
  status: 'running',
  count: 12000,
  distinct: 11412,
  processed: 4300,
  summary: { deliverable: 3100, risky: 700, undeliverable: 500 },
  costUsd: '6.15',
  createdAt: '2026-11-23T10:00:00.000Z',
  startedAt: '2026-11-23T10:00:01.000Z',
  completedAt: null,
  estimatedCompletionAt: '2026-11-23T10:12:00.000Z',
  column: { index: 3, header: 'E-Mail-Adresse' },
  encoding: 'windows-1252',
};

/** The same list as the `POST` that created it answers: nothing processed yet. */
/** The list object of a list that is not running: no time estimate. */
export const { estimatedCompletionAt: _running, ...LIST_IDLE_EXAMPLE } = LIST_OBJECT_EXAMPLE;

export const LIST_CREATED_EXAMPLE = {
  ...LIST_IDLE_EXAMPLE,
  status: 'queued',
  processed: 0,
  summary: { deliverable: 0, risky: 0, undeliverable: 0 },
  costUsd: '0',
  startedAt: null,
};

export const LIST_CREATE_EXAMPLE = {
  emails: ['ann@example.com', 'bob@gmial.com', 'ann@example.com'],
  name: 'newsletter',
  callbackUrl: 'https://hooks.example.com/lists?token=abc',
};

export const LIST_UPLOAD_EXAMPLE = 'name;email;company\r\nAnn;ann@example.com;Example\r\nBob;bob@gmial.com;"Gmial; Inc."\r\n';

export const LIST_PAGE_EXAMPLE = {
  lists: [LIST_OBJECT_EXAMPLE],
  nextCursor: encodeCursor(Date.parse(LIST_OBJECT_EXAMPLE.createdAt), LIST_OBJECT_EXAMPLE.id),
};

export const LIST_RESULTS_EXAMPLE = {
  id: LIST_OBJECT_EXAMPLE.id,
  status: 'running',
  count: 3,
  pending: 1,
  results: BATCH_RESPONSE_EXAMPLE.results.slice(0, 2),
};

/** The upload above with its results appended, in its own separator. */
export const LIST_RESULTS_CSV_EXAMPLE =
  'name;email;company;verdict;score;reason;did_you_mean\n' +
  'Ann;ann@example.com;Example;deliverable;95;accepted_email;\n' +
  'Bob;bob@gmial.com;"Gmial; Inc.";undeliverable;0;invalid_domain;bob@gmail.com\n';

export const LIST_CREATE_ERRORS: ErrorExamples = {
  invalid_request: {
    error: 'invalid_request',
    message: 'The body must be a JSON object whose `emails` is an array of 1 to 100000 address strings.',
    details: { path: '$.emails' },
  },
  no_address_column: {
    error: 'invalid_request',
    message:
      'No column of this file holds e-mail addresses: no header names one (the header row has: 1 "Name", 2 "Phone") and no ' +
      "column's cells look like addresses. Give the column with ?column= (a header or a 1-based number), or check that this is the right file.",
    details: { columns: ['Name', 'Phone'] },
  },
  not_text: {
    error: 'invalid_request',
    message:
      'The CSV file holds a control character (0x00), so it is not text at line 1, byte 2. It looks like a binary file (a workbook ' +
      'renamed .csv?): export it as "CSV UTF-8" and send that.',
    details: { line: 1, byte: 2 },
  },
  too_many_emails: { error: 'too_many_emails', message: 'A list may contain at most 100000 addresses.', details: { max: 100000 } },
  invalid_parameter: {
    error: 'invalid_parameter',
    message: 'callbackUrl must use https://.',
    details: { param: 'callbackUrl' },
  },
  unknown_column: {
    error: 'invalid_parameter',
    message: 'No column is headed "Mail". The header row has: 1 "Name", 2 "Email". Give a header or a 1-based column number.',
    details: { param: 'column' },
  },
};

export const LIST_LIMIT_ERRORS: ErrorExamples = {
  rate_limited: ERROR_EXAMPLES.rate_limited,
  active_lists: {
    error: 'rate_limited',
    message: 'This key already has 3 lists queued or running; wait for one to finish or cancel one, then retry.',
    details: { maxActiveLists: 3 },
  },
  quota_exceeded: {
    error: 'quota_exceeded',
    message:
      "This key's lists hold 950000 of the 1000000 rows a key may keep stored (LIST_MAX_STORED_ROWS_PER_KEY, duplicates and empty rows included), and this list would pass that quota. Delete lists you no longer need, or wait until old lists' data expires (its retention after they end), then retry.",
    details: { maxStoredRows: 1000000, storedRows: 950000 },
  },
};

export const LIST_PAGE_ERRORS: ErrorExamples = {
  invalid_parameter: { error: 'invalid_parameter', message: 'limit must be an integer from 1 to 100.', details: { param: 'limit' } },
};

export const LIST_RESULTS_ERRORS: ErrorExamples = {
  invalid_parameter: { error: 'invalid_parameter', message: 'format must be json or csv.', details: { param: 'format' } },
};

export const LIST_NOT_FOUND: ErrorExamples = {
  not_found: { error: 'not_found', message: 'No list lst_5f0c3a9d8e7b6a5f4e3d2c1b for this key.' },
};
