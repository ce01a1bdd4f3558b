/**
 * List verification routes (`/v1/email-verify/lists`). Creating a list is the metered call of
 * `email-verify.list` (rate limited, costs 0: units are billed as workers process them); reading
 * and cancelling are free. This plugin is encapsulated: its CSV body parser, 16 MiB body limit
 * and their error messages apply to these routes only.
 */
import { Readable } from 'node:stream';
import {
  ApiError,
  LIST_BODY_LIMIT_BYTES,
  MAX_LIST_ADDRESSES,
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
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { payloadTooLarge, readCsvUpload } from '../lists/csv-upload.ts';
import { csvResults, jsonResults } from '../lists/list-results.ts';
import type { ListService, NewListInput } from '../lists/list-service.ts';
import { tooManyAddresses } from '../lists/list-builder.ts';
import { errorBodySchema } from '../openapi-schemas.ts';
import { FREE_REMAINING_HEADER } from '../plugins/metering.ts';
import { validated } from '../plugins/validation.ts';

const errorResponses = Object.fromEntries([400, 401, 404, 413, 415, 429, 500, 503].map((status) => [status, errorBodySchema]));
import { BEARER_SECURITY } from './guards.ts';

const PREFIX = '/v1/email-verify/lists';
const CSV_TYPES = ['text/csv', 'application/csv'];
const JSON_LAYOUT = { columns: ['email'], addressColumn: 0, delimiter: ',', bom: false } as const;

/** docs/lists.md: over the limit is `too_many_emails`; a bad name or callback `invalid_parameter`; the rest `invalid_request`. */
export function listBodyError(error: z.ZodError): ApiError {
  const issue = error.issues[0];
  const field = issue?.path[0];
  if (issue?.code === 'too_big' && field === 'emails' && issue.path.length === 1) return tooManyAddresses();
  if (field === 'name') return invalidParameter('name', 'name must be a string of 1 to 200 characters.');
  if (field === 'callbackUrl') return invalidParameter('callbackUrl', 'callbackUrl must be an https:// URL of at most 2048 characters.');
  if (issue?.code === 'unrecognized_keys')
    return new ApiError(
      'invalid_request',
      `Unknown field ${issue.keys.map((key) => `\`${key}\``).join(', ')}; the body takes \`emails\`, \`name\` and \`callbackUrl\`.`,
    );
  return new ApiError(
    'invalid_request',
    `The body must be a JSON object whose \`emails\` is an array of 1 to ${MAX_LIST_ADDRESSES} address strings.`,
    {
      details: { path: ['$', ...(issue?.path ?? []).map(String)].join('.') },
    },
  );
}

export function queryError(error: z.ZodError): ApiError {
  const issue = error.issues[0];
  const param = issue?.code === 'unrecognized_keys' ? (issue.keys[0] ?? '?') : String(issue?.path[0] ?? '?');
  const known: Record<string, string> = {
    limit: 'limit must be an integer from 1 to 100.',
    cursor: 'cursor must be the nextCursor of a previous page.',
    format: 'format must be json or csv.',
    name: 'name must be a string of 1 to 200 characters.',
    callbackUrl: 'callbackUrl must be an https:// URL of at most 2048 characters.',
  };
  return invalidParameter(param, known[param] ?? `Unknown parameter \`${param}\`.`);
}

const idParams = validated(
  z.object({ id: z.string().describe('The list id, `lst_...`.') }),
  () => new ApiError('not_found', 'No such list.'),
);

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** A JSON list as upload rows. */
export function jsonInput(body: ListCreateBody): NewListInput {
  return {
    name: body.name,
    callbackUrl: body.callbackUrl,
    layout: { ...JSON_LAYOUT, columns: [...JSON_LAYOUT.columns] },
    rows: (function* () {
      for (const email of body.emails) yield [email];
    })(),
  };
}

export function listRoutes(app: FastifyInstance, options: { lists: ListService }, done: (error?: Error) => void): void {
  const { lists } = options;

  app.addContentTypeParser(CSV_TYPES, (request, payload, parsed) => {
    if (Number(request.headers['content-length'] ?? 0) > LIST_BODY_LIMIT_BYTES) return parsed(payloadTooLarge());
    parsed(null, payload);
  });
  // Only these routes take 16 MiB and CSV: say so in their errors (anything else goes up to the app's handler).
  app.setErrorHandler((error: FastifyError, request: FastifyRequest) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') throw payloadTooLarge();
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' && hasBody(request))
      throw new ApiError('unsupported_media_type', 'Send the list as application/json or text/csv.');
    throw error;
  });

  app.post(
    PREFIX,
    {
      config: { operation: 'email-verify.list', auth: 'key' },
      bodyLimit: LIST_BODY_LIMIT_BYTES,
      schema: {
        tags: ['email-verify'],
        summary: 'Verify a list (bulk job)',
        description:
          `Takes 1 to ${MAX_LIST_ADDRESSES} addresses as JSON \`{ "emails": [...], "name"?, "callbackUrl"? }\` or as \`text/csv\` ` +
          '(name and callbackUrl then as query parameters), up to 16 MiB. Answers 202 with the list object; poll it, or get a ' +
          'callback when it ends. Costs nothing now: each started 100 processed distinct addresses costs one batch.',
        security: BEARER_SECURITY,
        querystring: validated(listCreateQuerySchema, queryError),
        response: { 202: listObjectSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const key = request.identity.key!;
      const query = request.query as z.infer<typeof listCreateQuerySchema>;
      let input: NewListInput;
      if (request.body instanceof Readable) {
        lists.checkCallback(query.callbackUrl);
        const upload = await readCsvUpload(request.body);
        input = { ...upload, name: query.name, callbackUrl: query.callbackUrl };
      } else {
        if (Object.keys(query).length > 0)
          throw invalidParameter(Object.keys(query)[0]!, 'With a JSON body, give name and callbackUrl in the body.');
        const parsed = listCreateBodySchema.safeParse(request.body);
        if (!parsed.success) throw listBodyError(parsed.error);
        input = jsonInput(parsed.data);
      }
      const list = await lists.create(key, input, request.log);
      reply.header(FREE_REMAINING_HEADER, String(await lists.freeRemaining(key)));
      return reply.code(202).header('Location', `${PREFIX}/${list.id}`).send(list);
    },
  );

  const reading = { config: { auth: 'key' as const } };

  app.get(
    PREFIX,
    {
      ...reading,
      schema: {
        tags: ['email-verify'],
        summary: "The key's lists, newest first (not metered)",
        security: BEARER_SECURITY,
        querystring: validated(listPageQuerySchema, queryError),
        response: { 200: listPageSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query as z.infer<typeof listPageQuerySchema>;
      if (cursor !== undefined && decodeCursor(cursor) === undefined)
        throw invalidParameter('cursor', 'cursor must be the nextCursor of a previous page.');
      return lists.page(request.identity.key!.id, limit, cursor);
    },
  );

  app.get(
    `${PREFIX}/:id`,
    {
      ...reading,
      schema: {
        tags: ['email-verify'],
        summary: 'A list (not metered)',
        security: BEARER_SECURITY,
        params: idParams,
        response: { 200: listObjectSchema, ...errorResponses },
      },
    },
    async (request) => lists.object(await lists.get(request.identity.key!.id, (request.params as { id: string }).id)),
  );

  app.get(
    `${PREFIX}/:id/results`,
    {
      ...reading,
      schema: {
        tags: ['email-verify'],
        summary: "A list's results in input order, JSON or CSV (not metered)",
        description:
          'One result per settled entry, in input order; entries not settled yet are left out and counted in `pending` ' +
          '(and `X-List-Pending`). CSV keeps the uploaded columns and appends verdict, score, reason, did_you_mean.',
        security: BEARER_SECURITY,
        params: idParams,
        querystring: validated(listResultsQuerySchema, queryError),
        response: { 200: listResultsSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const record = await lists.get(request.identity.key!.id, (request.params as { id: string }).id);
      const { format } = request.query as z.infer<typeof listResultsQuerySchema>;
      reply.header('X-List-Status', record.status).header('X-List-Pending', String(record.count - record.processed));
      if (format === 'csv') {
        reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${record.id}.csv"`);
        return reply.send(Readable.from(csvResults(lists.store, record)));
      }
      return reply.type('application/json; charset=utf-8').send(Readable.from(jsonResults(lists.store, record)));
    },
  );

  app.delete(
    `${PREFIX}/:id`,
    {
      ...reading,
      schema: {
        tags: ['email-verify'],
        summary: 'Cancel a list: entries not yet probed are never probed nor billed',
        security: BEARER_SECURITY,
        params: idParams,
        response: { 200: listObjectSchema, ...errorResponses },
      },
    },
    async (request) => lists.cancel(request.identity.key!.id, (request.params as { id: string }).id),
  );
  done();
}
