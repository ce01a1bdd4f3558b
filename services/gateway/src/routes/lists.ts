/**
 * The list operations' REST door (`/v1/email-verify/lists`): what is HTTP's is here (media
 * types, the upload read as a stream, status codes, headers, streaming the download); each
 * route's path, schemas, OpenAPI prose and metering are its operation's (operations/lists/*.ts),
 * and what a list is, and how its input is refused, is `@svc/lists/service`'s. This plugin is
 * encapsulated: its CSV body parser, 16 MiB body limit and their error messages apply to these
 * routes only.
 */
import { Readable } from 'node:stream';
import { ApiError, LIST_BODY_LIMIT_BYTES, invalidParameter, type ListCreateBody } from '@svc/contracts';
import {
  jsonInput,
  payloadTooLarge,
  readCsvUpload,
  readXlsxUpload,
  XLSX_MEDIA_TYPE,
  type ListService,
  type NewListInput,
} from '@svc/lists/service';
import type { FastifyError, FastifyRequest, FastifySchema } from 'fastify';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { freeRemainingAfter, type ListCall, type ListOperation, type ListRoute } from '../operations/list-operation.ts';
import { listCancel } from '../operations/lists/cancel.ts';
import { listCreate } from '../operations/lists/create.ts';
import { listFinish } from '../operations/lists/finish.ts';
import { listPage } from '../operations/lists/page.ts';
import { listResults } from '../operations/lists/results.ts';
import { listStatus } from '../operations/lists/status.ts';
import { FREE_REMAINING_HEADER } from '../plugins/metering.ts';
import { hasBody } from '../request-body.ts';
import { callerKey } from './guards.ts';

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

/** The route of an operation that has one (every list operation but the tool's results page). */
function routeOf<I, A, S extends FastifySchema, T>(operation: ListOperation<I, A, S, T>): ListRoute<S> {
  if (operation.route === undefined) throw new Error('a list operation without a REST route was given to the REST door');
  return operation.route;
}

/** What the list routes are given: the service, and how long an accepted upload may take to arrive. */
export interface ListRoutesOptions {
  lists: ListService;
  uploadTimeoutMs: number;
}

/** Fastify's options for an operation's route: its schema, metering (or none: `auth` only) and, for an upload, its limits. */
function routeOptions<I, A, S extends FastifySchema, T>(operation: ListOperation<I, A, S, T>, uploadTimeoutMs: number) {
  const { method, url, schema, upload } = routeOf(operation);
  return {
    method,
    url,
    schema,
    config: {
      ...(operation.metering === undefined ? {} : { operation: operation.metering.id }),
      auth: 'key' as const,
      ...(upload === undefined ? {} : { bodyTimeoutMs: uploadTimeoutMs }),
    },
    ...(upload === undefined ? {} : { bodyLimit: upload.bodyLimit }),
  };
}

const callOf = (request: FastifyRequest, lists: ListService): ListCall => ({ lists, key: callerKey(request), log: request.log });

/** The upload as the create operation's input: the JSON body, or the CSV file or workbook read from its stream. */
async function uploadInput(
  lists: ListService,
  body: unknown,
  query: { name?: string | undefined; callbackUrl?: string | undefined; column?: string | undefined },
  contentType: string,
): Promise<NewListInput> {
  if (body instanceof Readable) {
    lists.checkCallback(query.callbackUrl);
    const upload = contentType.toLowerCase().startsWith(XLSX_MEDIA_TYPE)
      ? await readXlsxUpload(body, { column: query.column })
      : await readCsvUpload(body, { charset: charsetOf(contentType), column: query.column });
    return { ...upload, name: query.name, callbackUrl: query.callbackUrl };
  }
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
  if (!isValidatedJsonList(body)) throw missingListBody();
  return jsonInput(body);
}

/**
 * Cancelling and finishing take no body: whatever a client sends with them (an empty body under
 * `Content-Type: application/json`, as HTTP libraries set it for every call) is not read, in a
 * scope of their own so that no body parser runs.
 */
const bodilessRoutes: FastifyPluginCallbackZod<ListRoutesOptions> = (app, { lists, uploadTimeoutMs }, registered) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null, undefined));
  app.route({
    ...routeOptions(listCancel, uploadTimeoutMs),
    handler: (request) => listCancel.perform(callOf(request, lists), request.params),
  });
  app.route({
    ...routeOptions(listFinish, uploadTimeoutMs),
    handler: (request) => listFinish.perform(callOf(request, lists), request.params),
  });
  registered();
};

export const listRoutes: FastifyPluginCallbackZod<ListRoutesOptions> = (app, options, done) => {
  const { lists, uploadTimeoutMs } = options;

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

  app.route({
    ...routeOptions(listCreate, uploadTimeoutMs),
    handler: async (request, reply) => {
      const call = callOf(request, lists);
      const input = await uploadInput(lists, request.body, request.query, request.headers['content-type'] ?? '');
      const list = await listCreate.perform(call, input);
      const freeRemaining = await freeRemainingAfter(listCreate, call);
      if (freeRemaining !== undefined) reply.header(FREE_REMAINING_HEADER, String(freeRemaining));
      return reply
        .code(202)
        .header('Location', `${routeOf(listCreate).url}/${list.id}`)
        .send(list);
    },
  });

  app.route({ ...routeOptions(listPage, uploadTimeoutMs), handler: (request) => listPage.perform(callOf(request, lists), request.query) });

  app.route({
    ...routeOptions(listStatus, uploadTimeoutMs),
    handler: (request) => listStatus.perform(callOf(request, lists), request.params),
  });

  app.route({
    ...routeOptions(listResults, uploadTimeoutMs),
    handler: async (request, reply) => {
      const download = await listResults.perform(callOf(request, lists), { ...request.params, ...request.query });
      reply.header('X-List-Status', download.status).header('X-List-Pending', String(download.pending));
      if (download.format === 'csv')
        reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${download.id}.csv"`);
      else reply.type('application/json; charset=utf-8');
      return reply.send(Readable.from(download.body));
    },
  });

  app.register(bodilessRoutes, { lists, uploadTimeoutMs });
  done();
};
