/**
 * What the OpenAPI document says beyond the request schemas: the response bodies that exist only
 * at the HTTP edge (error, QR matrix, usage), the response headers, and the responses each kind of
 * route answers. Route `schema.response` blocks are built here, so every operation documents the
 * errors and headers the plugins really send (docs/api.md, "Errors" and "Headers"); the same
 * blocks type the route handlers' replies through the zod type provider.
 */
import { Readable } from 'node:stream';
import {
  ERROR_STATUS,
  LIST_BODY_LIMIT_BYTES,
  LIST_ID_PATTERN,
  OPERATION_IDS,
  batchResponseSchema,
  checksSchema,
  listObjectSchema,
  listPageSchema,
  listResultsSchema,
  summarySchema,
  verifyResultSchema,
} from '@svc/contracts';
import { z } from 'zod';
import { ERROR_EXAMPLES, LIST_LIMIT_ERRORS, LIST_NOT_FOUND, type ErrorExamples } from './openapi-examples.ts';

export const errorBodySchema = z
  .object({
    error: z.enum(Object.keys(ERROR_STATUS)).describe('Machine-readable code; each code has one HTTP status (docs/api.md, "Errors").'),
    message: z.string().describe('One sentence for people: which parameter, and what is allowed.'),
    details: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Where the problem is: `param` (query parameter), `path` (JSON path in the body), `limit`/`max`, `requestId`.'),
  })
  .describe('Every error: a machine-readable code and a human-readable message.');

export const qrMatrixSchema = z
  .object({
    version: z.number().int().min(1).max(10).describe('QR version, 1 to 10.'),
    ecc: z.literal('M').describe('Error-correction level, always M.'),
    size: z.number().int().min(21).max(57).describe('Modules per side (17 + 4 × version), quiet zone excluded.'),
    margin: z.number().int().min(0).max(20).describe('The quiet zone asked for, in modules (not included in `modules`).'),
    modules: z
      .array(z.array(z.union([z.literal(0), z.literal(1)])))
      .describe('`size` rows of `size` modules, top to bottom and left to right; 1 = dark.'),
  })
  .describe('The QR code as its module matrix (`format=json`).');

export const svgSchema = z
  .string()
  .describe('The QR code as an SVG image: width and height `(size + 2 × margin) × scale` pixels, a viewBox in modules.')
  // The document's root element: without a name Swagger UI cannot show an example of an XML media type.
  .meta({ xml: { name: 'svg' } });

const money = z
  .string()
  .regex(/^(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/)
  .describe('US dollars as a plain decimal, like `X-Service-Cost`.');

export const operationUsageSchema = z
  .object({
    calls: z.number().int().min(0).describe('Successful calls this month, free ones included (lists: units of 100 addresses).'),
    billableCalls: z.number().int().min(0).describe('Calls beyond the free allowance.'),
    freeRemaining: z.number().int().min(0).describe('Calls left in the free allowance this month (shared with `allowanceFrom`).'),
    costUsd: money,
    priceUsd: money.describe('Price of one billable call (lists: of one started 100 processed distinct addresses).'),
    allowanceFrom: z
      .enum(OPERATION_IDS)
      .describe('The operation whose free allowance this one draws on: itself, or `email-verify.batch` for lists.'),
    addresses: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Lists only: distinct addresses processed this month; `calls` are the units of 100 they were billed in.'),
  })
  .describe("One operation's usage this month.");

const allowanceUsageSchema = z
  .object({
    operations: z.array(z.enum(OPERATION_IDS)).describe('The operations drawing on it (batches and lists share one).'),
    allowance: z.number().int().min(0).describe('Free calls a month.'),
    used: z.number().int().min(0).describe('Calls made against it this month.'),
    remaining: z.number().int().min(0).describe('Free calls left this month.'),
  })
  .describe('A free allowance, listed once however many operations draw on it.');

const operationsShape: Record<string, typeof operationUsageSchema> = Object.fromEntries(
  OPERATION_IDS.map((operation) => [operation, operationUsageSchema]),
);

export const usageResponseSchema = z
  .object({
    period: z
      .string()
      .regex(/^\d{4}-\d{2}$/)
      .describe('The UTC calendar month, YYYY-MM.'),
    operations: z.object(operationsShape).describe('Every operation, by operation id.'),
    allowances: z.array(allowanceUsageSchema).describe('Each free allowance once, with the operations that draw on it.'),
    totalCostUsd: money.describe("The month's total so far."),
  })
  .describe("The caller's usage and cost this month.");

/** Response schemas shown once under `components.schemas` and referenced by name. */
export const NAMED_SCHEMAS: Record<string, z.ZodType> = {
  Error: errorBodySchema,
  BatchResponse: batchResponseSchema,
  VerifyResult: verifyResultSchema,
  VerificationChecks: checksSchema,
  VerdictSummary: summarySchema,
  QrMatrix: qrMatrixSchema,
  Usage: usageResponseSchema,
  OperationUsage: operationUsageSchema,
  List: listObjectSchema,
  ListPage: listPageSchema,
  ListResults: listResultsSchema,
};

/**
 * CSV is a stream inside the gateway (an upload is parsed as it arrives, results are written as
 * they are read) and text on the wire: the schema accepts the stream and documents the text.
 */
export const csvStreamSchema = (description: string) => z.instanceof(Readable).meta({ type: 'string', description });

const integer = (minimum: number) => ({ type: 'integer', minimum });

/** The response headers, as OpenAPI header objects (`components.headers`). */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      'Identifies the request in our logs: the `X-Request-Id` you sent when it is 1 to 128 characters of `A-Z a-z 0-9 . _ : -`, else a generated UUID. On every response.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
    example: '7d0b6c1e-4c1f-4d2a-9f0e-2b1f0c9a7e55',
  },
  'X-Service-Cost': {
    description:
      'What this call cost in US dollars, as a plain decimal without unit, exponent or trailing zeros. On every response of a metered route; `0` on errors and inside the free allowance.',
    schema: { type: 'string', pattern: '^(0|[1-9][0-9]*)(\\.[0-9]*[1-9])?$' },
    example: '0.0005',
  },
  'X-Service-Free-Remaining': {
    description: "Calls of this operation left in the key's free allowance this month (UTC). On successful responses of a metered route.",
    schema: integer(0),
    example: 999,
  },
  'RateLimit-Limit': {
    description: 'Calls per window (60 s) this key may make of this operation. On every response of a metered route while its limit is on.',
    schema: integer(1),
    example: 300,
  },
  'RateLimit-Remaining': {
    description: 'Calls left in the current window.',
    schema: integer(0),
    example: 299,
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window ends.',
    schema: integer(0),
    example: 60,
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again. On 429 and 503.',
    schema: integer(0),
    example: 5,
  },
  'WWW-Authenticate': {
    description:
      'The bearer challenge (RFC 6750): `Bearer realm="api"`, with `error="invalid_token"` when a key was sent but is unknown or revoked. On 401.',
    schema: { type: 'string' },
    example: 'Bearer realm="api", error="invalid_token"',
  },
  Allow: {
    description: 'The methods this path takes. On 405.',
    schema: { type: 'string' },
    example: 'GET',
  },
  Location: {
    description: 'Where the new list is: `/v1/email-verify/lists/{id}`. On 202.',
    schema: { type: 'string', pattern: `^/v1/email-verify/lists/${LIST_ID_PATTERN}$` },
    example: '/v1/email-verify/lists/lst_5f0c3a9d8e7b6a5f4e3d2c1b',
  },
  'X-List-Status': {
    description: "The list's status when its results were read.",
    schema: { type: 'string', enum: ['queued', 'running', 'retrying', 'completed', 'cancelled', 'failed'] },
    example: 'running',
  },
  'X-List-Pending': {
    description: 'Entries not settled when the results were read, left out of them (0 once the list completed).',
    schema: integer(0),
    example: 7700,
  },
  'Content-Disposition': {
    description: 'CSV results come as a file named after the list.',
    schema: { type: 'string' },
    example: 'attachment; filename="lst_5f0c3a9d8e7b6a5f4e3d2c1b.csv"',
  },
} as const;

export type HeaderName = keyof typeof RESPONSE_HEADERS;

export interface MediaDoc<S extends z.ZodType = z.ZodType> {
  schema: S;
  example?: unknown;
  examples?: Record<string, { summary: string; value: unknown }>;
}

/** One response of a route: fastify reads `content[type].schema`; the OpenAPI plugin reads all of it. */
export interface ResponseDoc<C extends Record<string, MediaDoc> = Record<string, MediaDoc>> {
  description: string;
  headers: readonly HeaderName[];
  content: C;
}

export const json = <S extends z.ZodType>(schema: S, example: unknown) => ({ 'application/json': { schema, example } });

function errorResponse(
  description: string,
  headers: readonly HeaderName[],
  examples: ErrorExamples,
): ResponseDoc<{ 'application/json': MediaDoc<typeof errorBodySchema> }> {
  const named = Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { summary: value.message, value }]));
  return { description, headers, content: { 'application/json': { schema: errorBodySchema, examples: named } } };
}

const RATE_LIMIT: readonly HeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
const METERED: readonly HeaderName[] = ['X-Request-Id', 'X-Service-Cost', ...RATE_LIMIT];
const PLAIN: readonly HeaderName[] = ['X-Request-Id'];

/** The errors every route can answer whatever it does, with the headers of its kind. */
function commonErrors(headers: readonly HeaderName[]) {
  return {
    401: errorResponse('No valid API key: missing, malformed, unknown or revoked. Costs nothing.', [...headers, 'WWW-Authenticate'], {
      unauthorized: ERROR_EXAMPLES.unauthorized,
    }),
    405: errorResponse(
      'The path does not take this method (HEAD included on metered routes, so that no job runs for nothing); `Allow` lists those it takes.',
      [...headers, 'Allow'],
      { method_not_allowed: ERROR_EXAMPLES.method_not_allowed },
    ),
    431: errorResponse('The request line and headers exceed 16 KiB, for example a very long query string.', headers, {
      headers_too_large: ERROR_EXAMPLES.headers_too_large,
    }),
    500: errorResponse('A fault on our side, logged under the request id that the message and `details.requestId` quote.', headers, {
      internal_error: ERROR_EXAMPLES.internal_error,
    }),
    503: errorResponse(
      'The service cannot take the call now (job backend or key store unreachable, or shutting down); try again after `Retry-After` seconds.',
      [...headers, 'Retry-After'],
      { service_unavailable: ERROR_EXAMPLES.service_unavailable },
    ),
  };
}

/**
 * The responses of a metered route (a billable operation): its success, its own 400s, and every
 * error the plugins answer before or after it, each with the cost and rate-limit headers.
 */
export function meteredResponses<C extends Record<string, MediaDoc>>(
  success: { description: string; content: C },
  badRequest: { description: string; examples: ErrorExamples },
) {
  return {
    200: { description: success.description, headers: [...METERED, 'X-Service-Free-Remaining'], content: success.content },
    400: errorResponse(`${badRequest.description} Costs nothing.`, METERED, badRequest.examples),
    ...commonErrors(METERED),
    429: errorResponse(
      "Over this operation's rate limit for the key; try again after `Retry-After` seconds. Costs nothing.",
      [...METERED, 'Retry-After'],
      {
        rate_limited: ERROR_EXAMPLES.rate_limited,
      },
    ),
    504: errorResponse('The job did not finish within the request deadline. Costs nothing.', METERED, { timeout: ERROR_EXAMPLES.timeout }),
  } satisfies Record<number, ResponseDoc>;
}

/** A metered route that takes a JSON body adds its body errors. */
export function bodyErrors() {
  return {
    413: errorResponse('The request body is larger than 64 KiB.', METERED, { payload_too_large: ERROR_EXAMPLES.payload_too_large }),
    415: errorResponse('A body was sent with a content type other than `application/json`.', METERED, {
      unsupported_media_type: ERROR_EXAMPLES.unsupported_media_type,
    }),
  } satisfies Record<number, ResponseDoc>;
}

/** The responses of an authenticated route that is not metered (`/v1/usage`). */
export function accountResponses<C extends Record<string, MediaDoc>>(success: { description: string; content: C }) {
  return {
    200: { description: success.description, headers: PLAIN, content: success.content },
    ...commonErrors(PLAIN),
  } satisfies Record<number, ResponseDoc>;
}

/** The responses of the history: not metered, not limited; a query to refuse. */
export function historyResponses<C extends Record<string, MediaDoc>>(success: { description: string; content: C }) {
  return {
    200: { description: success.description, headers: PLAIN, content: success.content },
    400: errorResponse('`email` is missing or not an address, or `before`/`limit` is invalid (`invalid_parameter`).', PLAIN, {
      invalid_parameter: { error: 'invalid_parameter', message: '`email` is not an address.' },
    }),
    ...commonErrors(PLAIN),
  } satisfies Record<number, ResponseDoc>;
}

/** The responses of the feedback doors: not metered, but rate-limited and with a body to refuse. */
export function feedbackResponses<C extends Record<string, MediaDoc>>(
  success: { description: string; content: C },
  badRequest: ErrorExamples,
  notFound?: ErrorExamples,
) {
  const headers: readonly HeaderName[] = ['X-Request-Id', ...RATE_LIMIT];
  const unknownSource: Record<number, ResponseDoc> =
    notFound === undefined ? {} : { 404: errorResponse('No such feedback source.', headers, notFound) };
  return {
    200: { description: success.description, headers, content: success.content },
    400: errorResponse("The body is not what the route takes (not JSON, not the source's webhook shape).", headers, badRequest),
    ...commonErrors(headers),
    ...unknownSource,
    429: errorResponse("Over the key's feedback rate limit; try again after `Retry-After` seconds.", [...headers, 'Retry-After'], {
      rate_limited: ERROR_EXAMPLES.rate_limited,
    }),
  } satisfies Record<number, ResponseDoc>;
}

interface ErrorDoc {
  description: string;
  examples: ErrorExamples;
}

/**
 * `POST /v1/email-verify/lists`: metered (rate limit, cost headers) but answered at once, `202`
 * with `Location`, before any job runs (so no `504`); its own body limit and media types.
 */
export function listCreateResponses<C extends Record<string, MediaDoc>>(
  success: { description: string; content: C },
  badRequest: ErrorDoc,
) {
  return {
    202: { description: success.description, headers: [...METERED, 'X-Service-Free-Remaining', 'Location'], content: success.content },
    400: errorResponse(`${badRequest.description} Costs nothing.`, METERED, badRequest.examples),
    ...commonErrors(METERED),
    413: errorResponse(`The body is larger than ${LIST_BODY_LIMIT_BYTES / (1024 * 1024)} MiB.`, METERED, {
      payload_too_large: { error: 'payload_too_large', message: 'A list upload may be at most 16 MiB.' },
    }),
    415: errorResponse('A body was sent with a content type other than `application/json` or `text/csv`.', METERED, {
      unsupported_media_type: {
        error: 'unsupported_media_type',
        message:
          'Send the list as application/json, text/csv or an Excel workbook (application/vnd.openxmlformats-officedocument.spreadsheetml.sheet).',
      },
    }),
    429: errorResponse(
      "Over the key's rate limit of list creations, or the key already has its maximum of lists queued or running (the message " +
        'says which); try again after `Retry-After` seconds. Costs nothing.',
      [...METERED, 'Retry-After'],
      LIST_LIMIT_ERRORS,
    ),
  } satisfies Record<number, ResponseDoc>;
}

/** The routes that read or cancel a list: not metered, authenticated; add `unmeteredBadRequest` and `listNotFound` as they apply. */
export function listReadResponses<C extends Record<string, MediaDoc>>(success: {
  description: string;
  headers?: readonly HeaderName[];
  content: C;
}) {
  return {
    200: { description: success.description, headers: [...PLAIN, ...(success.headers ?? [])], content: success.content },
    ...commonErrors(PLAIN),
  } satisfies Record<number, ResponseDoc>;
}

/** A `400` of a route that is not metered (a query parameter it refuses). */
export function unmeteredBadRequest(badRequest: ErrorDoc) {
  return { 400: errorResponse(badRequest.description, PLAIN, badRequest.examples) } satisfies Record<number, ResponseDoc>;
}

/** `404` of the routes of one list. */
export function listNotFound() {
  return {
    404: errorResponse('No list with this id for this key (the lists of other keys are not found either).', PLAIN, LIST_NOT_FOUND),
  } satisfies Record<number, ResponseDoc>;
}
