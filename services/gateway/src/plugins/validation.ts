/**
 * Requests are validated by the same zod schemas that document them in OpenAPI. Each schema is
 * registered with the function that turns its issues into the contract's error (batch bodies
 * answer `invalid_request`/`too_many_emails`, query parameters `invalid_parameter`, ...). The
 * handlers see the parsed values with their zod output types through fastify-type-provider-zod's
 * `ZodTypeProvider` (route plugins are `FastifyPluginCallbackZod`); its own validator compiler is
 * not used, because it answers its own error shape instead of the contract's.
 */
import { invalidParameter, type ApiError } from '@svc/contracts';
import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';

export type IssueMapper = (error: z.ZodError) => ApiError;

const mappers = new WeakMap<z.ZodType, IssueMapper>();

export function validated<T extends z.ZodType>(schema: T, toError: IssueMapper): T {
  mappers.set(schema, toError);
  return schema;
}

/**
 * A query parameter sent more than once (`data=hi&data=ho`) reaches the schema as an array, which
 * every query schema refuses; the schema's own words would then say "`data` must be text", which
 * misleads. Looked for only once validation failed, so a valid request pays nothing for it.
 */
function repeatedParameter(query: unknown, error: z.ZodError): ApiError | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  for (const issue of error.issues) {
    const name = issue.path[0];
    if (typeof name === 'string' && Array.isArray((query as Record<string, unknown>)[name])) {
      return invalidParameter(name, `\`${name}\` is given more than once; send it once.`);
    }
  }
  return undefined;
}

export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const toError = mappers.get(schema);
  if (toError === undefined) throw new Error('route schema registered without an error mapper (use validated())');
  const isQuery = httpPart === 'querystring';
  return (data: unknown) => {
    const parsed = schema.safeParse(data);
    if (parsed.success) return { value: parsed.data };
    return { error: (isQuery ? repeatedParameter(data, parsed.error) : undefined) ?? toError(parsed.error) };
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
