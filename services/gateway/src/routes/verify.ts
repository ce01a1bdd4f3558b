import {
  ApiError,
  MAX_BATCH,
  VERIFY_JOB,
  batchRequestSchema,
  batchResponseSchema,
  buildBatchResponse,
  invalidParameter,
  singleVerifyQuerySchema,
  verifyResultSchema,
} from '@svc/contracts';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { errorResponses } from '../openapi-schemas.ts';
import type { JobRunner } from '../operation.ts';
import { validated } from '../plugins/validation.ts';
import { BEARER_SECURITY, operationGuards } from './guards.ts';

export const TOO_MANY_EMAILS_MESSAGE = `A batch may contain at most ${MAX_BATCH} addresses.`;

/** decisions.md: over 100 entries is `too_many_emails`; every other body problem `invalid_request`. */
export function batchBodyError(error: z.ZodError): ApiError {
  const issue = error.issues[0];
  if (issue?.code === 'too_big' && issue.path.length === 1 && issue.path[0] === 'emails') {
    return new ApiError('too_many_emails', TOO_MANY_EMAILS_MESSAGE, { details: { path: '$.emails', max: MAX_BATCH } });
  }
  const path = ['$', ...(issue?.path ?? []).map(String)].join('.');
  return new ApiError('invalid_request', batchProblem(issue), { details: { path } });
}

function batchProblem(issue: z.core.$ZodIssue | undefined): string {
  if (issue?.code === 'unrecognized_keys')
    return `Unknown field ${issue.keys.map((key) => `\`${key}\``).join(', ')}; the body takes only \`emails\`.`;
  if (issue === undefined || issue.path.length === 0) return 'The body must be a JSON object `{ "emails": [ ... ] }`.';
  if (issue.path.length === 1) return `\`emails\` must be an array of 1 to ${MAX_BATCH} address strings.`;
  return `Each entry of \`emails\` must be a string.`;
}

export function singleQueryError(error: z.ZodError): ApiError {
  const issue = error.issues[0];
  if (issue?.code === 'unrecognized_keys') return invalidParameter(issue.keys[0] ?? '?', `Unknown parameter \`${issue.keys[0]}\`.`);
  return invalidParameter('email', 'Give the address to verify as `email`.');
}

export function verifyRoutes(app: FastifyInstance, options: { runner: JobRunner }, done: (error?: Error) => void): void {
  app.post(
    '/v1/email-verify/verify/batch',
    {
      config: { operation: 'email-verify.batch' },
      onRequest: operationGuards(app, 'email-verify.batch'),
      schema: {
        tags: ['email-verify'],
        summary: 'Verify a batch of email addresses',
        description: `Verifies 1 to ${MAX_BATCH} addresses concurrently; results come back in input order, duplicates are probed once.`,
        security: BEARER_SECURITY,
        body: validated(batchRequestSchema, batchBodyError),
        response: { 200: batchResponseSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { emails } = request.body as z.infer<typeof batchRequestSchema>;
      const { results } = await options.runner.run('email-verify.batch', VERIFY_JOB, { emails }, request.id);
      await app.charge(request, reply, 'email-verify.batch');
      return buildBatchResponse(results);
    },
  );

  app.get(
    '/v1/email-verify/verify',
    {
      config: { operation: 'email-verify.single' },
      onRequest: operationGuards(app, 'email-verify.single'),
      schema: {
        tags: ['email-verify'],
        summary: 'Verify one email address',
        security: BEARER_SECURITY,
        querystring: validated(singleVerifyQuerySchema, singleQueryError),
        response: { 200: verifyResultSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { email } = request.query as z.infer<typeof singleVerifyQuerySchema>;
      const { results } = await options.runner.run('email-verify.single', VERIFY_JOB, { emails: [email] }, request.id);
      const result = results[0];
      if (result === undefined) throw new Error('verify job answered no result');
      await app.charge(request, reply, 'email-verify.single');
      return result;
    },
  );
  done();
}
