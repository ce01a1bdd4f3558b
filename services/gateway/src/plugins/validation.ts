/**
 * Requests are validated by the same zod schemas that document them in OpenAPI. Each schema is
 * registered with the function that turns its issues into the contract's error (batch bodies
 * answer `invalid_request`/`too_many_emails`, query parameters `invalid_parameter`, ...).
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

/** Responses are plain JSON or text; their zod schemas exist for the documentation only. */
export const plainSerializerCompiler = () => (data: unknown) => JSON.stringify(data);
