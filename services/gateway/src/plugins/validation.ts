/**
 * Requests are validated by the same zod schemas that document them in OpenAPI. Each schema is
 * registered with the function that turns its issues into the contract's error (batch bodies
 * answer `invalid_request`/`too_many_emails`, query parameters `invalid_parameter`, ...). The
 * handlers see the parsed values with their zod output types through fastify-type-provider-zod's
 * `ZodTypeProvider` (route plugins are `FastifyPluginCallbackZod`); its own validator compiler is
 * not used, because it answers its own error shape instead of the contract's.
 */
import type { ApiError } from '@svc/contracts';
import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';

export type IssueMapper = (error: z.ZodError) => ApiError;

const mappers = new WeakMap<z.ZodType, IssueMapper>();

export function validated<T extends z.ZodType>(schema: T, toError: IssueMapper): T {
  mappers.set(schema, toError);
  return schema;
}

export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema }) => {
  const toError = mappers.get(schema);
  if (toError === undefined) throw new Error('route schema registered without an error mapper (use validated())');
  return (data: unknown) => {
    const parsed = schema.safeParse(data);
    return parsed.success ? { value: parsed.data } : { error: toError(parsed.error) };
  };
};

/**
 * Responses are sent as plain JSON or text: their zod schemas document them (openapi-schemas.ts)
 * and type the handlers' replies, and test/http/openapi-responses.test.ts checks real answers
 * against the document, so they are not parsed again on every reply.
 */
export const plainSerializerCompiler = () => (data: unknown) => JSON.stringify(data);

/**
 * fastify builds its default compilers (ajv and fast-json-stringify: about 40 ms and 5 MB of
 * start-up) unless given factories. The gateway's compilers are set on the root instance before
 * any route, so the validator factory is never asked for one: if it ever is, that is a route
 * outside the zod scheme, and it fails loudly instead of being validated by nothing.
 */
export const schemaCompilersFactory = {
  buildValidator: () => () => {
    throw new Error('every route is validated by zodValidatorCompiler (set on the root instance)');
  },
  buildSerializer: () => plainSerializerCompiler,
};
