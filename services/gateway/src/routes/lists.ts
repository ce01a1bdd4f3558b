/**
 * List verification routes (`/v1/email-verify/lists`), a door over `@svc/lists/service`: what is
 * HTTP's is here (media types, the CSV body as a stream, query parameters, OpenAPI, status codes
 * and headers); what a list is, and how its input is refused, is the package's. Creating a list
 * is the metered call of `email-verify.list` (rate limited, costs 0: units are billed as workers
 * process them); reading and cancelling are free. This plugin is encapsulated: its CSV body
 * parser, 16 MiB body limit and their error messages apply to these routes only.
 */
import { Readable } from 'node:stream';
import {
  ApiError,
  LIST_BODY_LIMIT_BYTES,
  MAX_LIST_ADDRESSES,
  FULL_RESULT_COLUMNS,
  RESULT_COLUMNS,
  invalidParameter,
  listCreateBodySchema,
  listCreateQuerySchema,
  listObjectSchema,
  listPageQuerySchema,
  listPageSchema,
  listResultsQuerySchema,
  listResultsSchema,
  type ListCreateBody,
} from '@svc/contracts';
import { decodeCursor } from '@svc/lists';
import {
  PARAMETER_MESSAGES,
  csvResults,
  jsonInput,
  jsonResults,
  listBodyError,
  pendingOf,
  parameterError,
  payloadTooLarge,
  readCsvUpload,
  readXlsxUpload,
  XLSX_MEDIA_TYPE,
  type ListService,
  type NewListInput,
} from '@svc/lists/service';
import type { FastifyError, FastifyRequest } from 'fastify';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { LIST_UPLOAD_TIMEOUT_MS } from '../plugins/body-timeout.ts';
import {
  LIST_CREATED_EXAMPLE,
  LIST_CREATE_ERRORS,
  LIST_IDLE_EXAMPLE,
  LIST_CREATE_EXAMPLE,
  LIST_OBJECT_EXAMPLE,
  LIST_PAGE_ERRORS,
  LIST_PAGE_EXAMPLE,
  LIST_RESULTS_CSV_EXAMPLE,
  LIST_RESULTS_ERRORS,
  LIST_RESULTS_EXAMPLE,
  LIST_UPLOAD_EXAMPLE,
} from '../openapi-examples.ts';
import { csvStreamSchema, json, listCreateResponses, listNotFound, listReadResponses, unmeteredBadRequest } from '../openapi-schemas.ts';
import { FREE_REMAINING_HEADER } from '../plugins/metering.ts';
import { validated } from '../plugins/validation.ts';
import { hasBody } from '../request-body.ts';
import { BEARER_SECURITY, callerKey } from './guards.ts';

const PREFIX = '/v1/email-verify/lists';

const queryError = parameterError({
  ...PARAMETER_MESSAGES,
  limit: 'limit must be an integer from 1 to 100.',
  format: 'format must be json or csv.',
  columns: 'columns must be default or full.',
});

const idParams = validated(
  z.object({ id: z.string().describe('The list id, `lst_` and 24 hex digits.') }),
  () => new ApiError('not_found', 'No such list.'),
);

/** The upload as fastify validates it per media type: the JSON object, or the CSV file as a stream (read by the handler). */
const csvUpload = validated(
  csvStreamSchema(
    "The file as it is: RFC 4180, `,`, `;` or tab separated; UTF-8 with or without BOM, UTF-16 with a BOM (Excel's " +
      '"Unicode text"), else Windows-1252 for a file that is not UTF-8; a `charset` on the Content-Type wins. The address ' +
      'column is `?column=`, else the one whose header names an address (`Email`, `E-mail Address`, `Work Email`, ' +
      '`E-Mail-Adresse`, `Courriel`, ...), else the one whose cells look like addresses. Rows without an address are kept ' +
      'in the CSV results and are no entries. Other columns are kept and returned.',
  ).meta({ examples: [LIST_UPLOAD_EXAMPLE] }),
  () => new ApiError('invalid_request', 'The CSV body could not be read.'),
);
const xlsxUpload = validated(
  csvStreamSchema(
    'An Excel workbook (.xlsx, up to 16 MiB): its first sheet is read like a CSV file (the address column found the same way, other ' +
      'columns kept and returned in a CSV). A workbook that inflates to more than 128 MiB is refused `413`.',
  ),
  () => new ApiError('invalid_request', 'The workbook could not be read.'),
);
const uploadBody = {
  content: {
    'application/json': { schema: validated(listCreateBodySchema.meta({ examples: [LIST_CREATE_EXAMPLE] }), listBodyError) },
    'text/csv': { schema: csvUpload },
    'application/csv': { schema: csvUpload },
    [XLSX_MEDIA_TYPE]: { schema: xlsxUpload },
  },
};

const csvResultsBody = csvStreamSchema(
  `The uploaded file (a JSON list: one \`email\` column) with ${RESULT_COLUMNS.join(', ')} appended (\`columns=full\`: ` +
    `${FULL_RESULT_COLUMNS.join(', ')}), in the upload's separator, after a UTF-8 byte-order mark; settled entries only, in input ` +
    "order. A cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a leading `'` so that a " +
    'spreadsheet shows it as text instead of running it.',
);

const NOT_METERED = 'Not metered: reading and cancelling lists cost nothing and are not rate-limited.';

/** The `charset` parameter of a Content-Type, if it has one. */
export function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(contentType ?? '');
  return match === null ? undefined : (match[1] ?? match[2]);
}

/** A body the JSON schema let through (other media types are refused before the handler). */
function isValidatedJsonList(body: unknown): body is ListCreateBody {
  return typeof body === 'object' && body !== null && 'emails' in body && Array.isArray(body.emails);
}

const missingListBody = () => new ApiError('invalid_request', 'Send the list as a JSON object `{ "emails": [...] }` or as CSV.');

/** Routes that read what a key has: no operation, no metering. */
const reading = { config: { auth: 'key' as const } };

/**
 * Cancelling takes no body: whatever a client sends with it (an empty body under
 * `Content-Type: application/json`, as HTTP libraries set it for every call) is not read, in a
 * scope of its own so that no body parser runs.
 */
const cancelRoute: FastifyPluginCallbackZod<{ lists: ListService }> = (cancelling, { lists }, registered) => {
  cancelling.removeAllContentTypeParsers();
  cancelling.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null, undefined));
  cancelling.delete(
    `${PREFIX}/:id`,
    {
      ...reading,
      schema: {
        operationId: 'cancelList',
        tags: ['email-verify'],
        summary: 'Cancel a list',
        description:
          'Entries not yet probed are never probed nor billed; sessions under way are cut and their answers dropped. A list that ' +
          `already ended is answered as it is. With a \`callbackUrl\`, the list is POSTed to it with \`"event": "list.cancelled"\`. ${NOT_METERED}`,
        security: BEARER_SECURITY,
        params: idParams,
        response: {
          ...listReadResponses({
            description: 'The list, now `cancelled` (or as it ended).',
            content: json(listObjectSchema, { ...LIST_IDLE_EXAMPLE, status: 'cancelled', completedAt: '2026-11-23T10:04:00.000Z' }),
          }),
          ...listNotFound(),
        },
      },
    },
    async (request) => lists.cancel(callerKey(request).id, request.params.id),
  );
  cancelling.post(
    `${PREFIX}/:id/finish`,
    {
      ...reading,
      schema: {
        operationId: 'finishList',
        tags: ['email-verify'],
        summary: 'Finish a retrying list now',
        description:
          'A list that is `retrying` (only greylisted or temporarily failed addresses wait for a retry) settles them now, each ' +
          '`risky` with the reason it was waiting for (`greylisted`, `timeout`, ...), and completes; its callback is sent as for ' +
          `any completed list. Any other list is answered as it is. Takes no body. ${NOT_METERED}`,
        security: BEARER_SECURITY,
        params: idParams,
        response: {
          ...listReadResponses({
            description: 'The list, now `completed` (or as it was, when it was not retrying).',
            content: json(listObjectSchema, {
              ...LIST_IDLE_EXAMPLE,
              name: null,
              status: 'completed',
              completedAt: '2026-11-23T10:04:00.000Z',
            }),
          }),
          ...listNotFound(),
        },
      },
    },
    async (request) => lists.finish(callerKey(request).id, request.params.id),
  );
  registered();
};

export const listRoutes: FastifyPluginCallbackZod<{ lists: ListService }> = (app, options, done) => {
  const { lists } = options;

  app.addContentTypeParser(['text/csv', 'application/csv', XLSX_MEDIA_TYPE], (request, payload, parsed) => {
    if (Number(request.headers['content-length'] ?? 0) > LIST_BODY_LIMIT_BYTES) return parsed(payloadTooLarge());
    parsed(null, payload);
  });
  // Only these routes take 16 MiB and CSV: say so in their errors (anything else goes up to the app's handler).
  app.setErrorHandler((error: FastifyError, request: FastifyRequest) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') throw payloadTooLarge();
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' && hasBody(request))
      throw new ApiError(
        'unsupported_media_type',
        `Send the list as application/json, text/csv or an Excel workbook (${XLSX_MEDIA_TYPE}).`,
      );
    throw error;
  });

  app.post(
    PREFIX,
    {
      config: { operation: 'email-verify.list', auth: 'key', bodyTimeoutMs: LIST_UPLOAD_TIMEOUT_MS },
      bodyLimit: LIST_BODY_LIMIT_BYTES,
      schema: {
        operationId: 'createList',
        tags: ['email-verify'],
        summary: 'Verify a list (bulk job)',
        description:
          `Takes 1 to ${MAX_LIST_ADDRESSES} addresses as JSON \`{ "emails": [...], "name"?, "callbackUrl"? }\` or as a CSV file ` +
          'or an Excel workbook (its first sheet; `name`, `callbackUrl` and `column` then as query parameters), up to 16 MiB, and answers 202 with the list object at once. Poll ' +
          'the list, read its results as it goes, or give a `callbackUrl`: the service POSTs the list, signed, when it ends. ' +
          'Costs nothing now: each started 100 processed distinct addresses costs one batch ($0.15), drawing on the batch free ' +
          'allowance first. Duplicates are probed and billed once; greylisted addresses are retried for minutes before they settle.',
        security: BEARER_SECURITY,
        querystring: validated(listCreateQuerySchema, queryError),
        body: uploadBody,
        response: listCreateResponses(
          {
            description: 'The list, `queued`; `Location` says where to poll it. `X-Service-Cost` is 0.',
            content: json(listObjectSchema, LIST_CREATED_EXAMPLE),
          },
          {
            description:
              'The body is not `{ "emails": [...] }` with 1 to 100000 strings or not readable CSV (bytes that are not text or ' +
              'not the encoding, named by line and byte in `details`), has no address column, or holds no address ' +
              '(`invalid_request`); more than 100000 entries (`too_many_emails`); or `name`/`callbackUrl`/`column` is refused ' +
              '(`invalid_parameter`, `details.param` names it).',
            examples: LIST_CREATE_ERRORS,
          },
        ),
      },
    },
    async (request, reply) => {
      const key = callerKey(request);
      const { query } = request;
      let input: NewListInput;
      if (request.body instanceof Readable) {
        lists.checkCallback(query.callbackUrl);
        const contentType = request.headers['content-type'] ?? '';
        const upload = contentType.toLowerCase().startsWith(XLSX_MEDIA_TYPE)
          ? await readXlsxUpload(request.body, { column: query.column })
          : await readCsvUpload(request.body, { charset: charsetOf(contentType), column: query.column });
        input = { ...upload, name: query.name, callbackUrl: query.callbackUrl };
      } else {
        const [param] = Object.keys(query);
        if (param !== undefined)
          throw invalidParameter(
            param,
            param === 'column'
              ? 'column chooses the address column of a CSV upload; a JSON body has its addresses in `emails`.'
              : 'With a JSON body, give name and callbackUrl in the body.',
          );
        // fastify ran listCreateBodySchema on the JSON body already (up to 100,000 addresses: not twice); the type
        // provider only sees `unknown` for a body of several media types, so narrow it without parsing it again.
        if (!isValidatedJsonList(request.body)) throw missingListBody();
        input = jsonInput(request.body);
      }
      const list = await lists.create(key, input, request.log);
      reply.header(FREE_REMAINING_HEADER, String(await lists.freeRemaining(key)));
      return reply.code(202).header('Location', `${PREFIX}/${list.id}`).send(list);
    },
  );

  app.get(
    PREFIX,
    {
      ...reading,
      schema: {
        operationId: 'listLists',
        tags: ['email-verify'],
        summary: "The key's lists, newest first",
        description: `Pages of 1 to 100 lists (\`limit\`, default 20); pass \`nextCursor\` back as \`cursor\` for the next page. ${NOT_METERED}`,
        security: BEARER_SECURITY,
        querystring: validated(listPageQuerySchema, queryError),
        response: {
          ...listReadResponses({
            description: 'A page of lists and the cursor of the next (`null` after the last).',
            content: json(listPageSchema, LIST_PAGE_EXAMPLE),
          }),
          ...unmeteredBadRequest({
            description: '`limit` out of 1..100, a `cursor` that no page gave, or an unknown parameter.',
            examples: LIST_PAGE_ERRORS,
          }),
        },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      if (cursor !== undefined && decodeCursor(cursor) === undefined) throw invalidParameter('cursor', PARAMETER_MESSAGES.cursor);
      return lists.page(callerKey(request).id, limit, cursor);
    },
  );

  app.get(
    `${PREFIX}/:id`,
    {
      ...reading,
      schema: {
        operationId: 'getList',
        tags: ['email-verify'],
        summary: 'A list: status, progress, verdicts so far, cost so far',
        description: `\`processed\` never decreases; \`costUsd\` is what the list has cost so far. ${NOT_METERED}`,
        security: BEARER_SECURITY,
        params: idParams,
        response: {
          ...listReadResponses({ description: 'The list.', content: json(listObjectSchema, LIST_OBJECT_EXAMPLE) }),
          ...listNotFound(),
        },
      },
    },
    async (request) => lists.object(await lists.get(callerKey(request).id, request.params.id)),
  );

  app.get(
    `${PREFIX}/:id/results`,
    {
      ...reading,
      schema: {
        operationId: 'getListResults',
        tags: ['email-verify'],
        summary: "A list's results in input order, as JSON or CSV",
        description:
          'One result per settled entry, in input order, streamed; entries not settled yet are left out and counted in `pending` ' +
          `(and \`X-List-Pending\`), so results may be read while the list runs. \`format=csv\` answers the uploaded file with ` +
          `${RESULT_COLUMNS.join(', ')} appended; \`columns=full\` also appends action (keep, review, remove), flags (role, free, ` +
          'disposable, catch_all, duplicate), provider and probability. Every CSV starts with a UTF-8 byte-order mark, and cells a ' +
          `spreadsheet would run as formulas are written with a leading \`'\`. ${NOT_METERED}`,
        security: BEARER_SECURITY,
        params: idParams,
        querystring: validated(listResultsQuerySchema, queryError),
        response: {
          ...listReadResponses({
            description: 'The results settled so far: JSON (`format=json`, the default) or the CSV file (`format=csv`).',
            headers: ['X-List-Status', 'X-List-Pending', 'Content-Disposition'],
            content: {
              'application/json': { schema: listResultsSchema, example: LIST_RESULTS_EXAMPLE },
              'text/csv': { schema: csvResultsBody, example: LIST_RESULTS_CSV_EXAMPLE },
            },
          }),
          ...unmeteredBadRequest({
            description: '`format` is neither `json` nor `csv`, `columns` neither `default` nor `full`, or an unknown parameter.',
            examples: LIST_RESULTS_ERRORS,
          }),
          ...listNotFound(),
        },
      },
    },
    async (request, reply) => {
      const record = await lists.get(callerKey(request).id, request.params.id);
      reply.header('X-List-Status', record.status).header('X-List-Pending', String(pendingOf(record)));
      if (request.query.format === 'csv') {
        reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${record.id}.csv"`);
        return reply.send(Readable.from(csvResults(lists.store, record, request.query.columns)));
      }
      return reply.type('application/json; charset=utf-8').send(Readable.from(jsonResults(lists.store, record)));
    },
  );

  app.register(cancelRoute, { lists });
  done();
};
