import {
  MAX_BATCH,
  VERIFY_JOB,
  batchRequestSchema,
  batchResponseSchema,
  buildBatchResponse,
  publicResult,
  publicResults,
  singleVerifyQuerySchema,
  verifyResultSchema,
} from '@svc/contracts';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { batchBodyError, singleQueryError } from '../errors/verify-input.ts';
import { errorResponses } from '../openapi-schemas.ts';
import { callOf, type JobRunner } from '../operation.ts';
import { validated } from '../plugins/validation.ts';
import { BEARER_SECURITY } from './guards.ts';

export function verifyRoutes(app: FastifyInstance, options: { runner: JobRunner }, done: (error?: Error) => void): void {
  app.post(
    '/v1/email-verify/verify/batch',
    {
      config: { operation: 'email-verify.batch', auth: 'key' },
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
      const job = await options.runner.run('email-verify.batch', VERIFY_JOB, { emails }, callOf(request));
      const body = buildBatchResponse(publicResults(emails, job));
      await app.charge(request, reply, 'email-verify.batch');
      return body;
    },
  );

  app.get(
    '/v1/email-verify/verify',
    {
      config: { operation: 'email-verify.single', auth: 'key' },
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
      const job = await options.runner.run('email-verify.single', VERIFY_JOB, { emails: [email] }, callOf(request));
      const result = publicResult(email, job);
      await app.charge(request, reply, 'email-verify.single');
      return result;
    },
  );
  done();
}
