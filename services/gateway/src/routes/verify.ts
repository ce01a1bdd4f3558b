/**
 * The verify operations' REST door: the batch takes its input as the JSON body, the single
 * address as the query string; each answers the operation's answer as JSON. Their OpenAPI words
 * are the operations' (operations/verify-*.ts).
 */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { BATCH_REQUEST_EXAMPLE } from '../openapi-examples.ts';
import { callOf, type JobRunner } from '../operation.ts';
import { perform } from '../operations/operation.ts';
import { verifyBatch, verifyBatchDocs } from '../operations/verify-batch.ts';
import { verifySingle, verifySingleDocs } from '../operations/verify-single.ts';
import { validated } from '../plugins/validation.ts';
import { BEARER_SECURITY } from './guards.ts';

export const verifyRoutes: FastifyPluginCallbackZod<{ runner: JobRunner }> = (app, options, done) => {
  app.post(
    '/v1/email-verify/verify/batch',
    {
      config: { operation: verifyBatch.id, auth: 'key' },
      schema: {
        ...verifyBatchDocs,
        security: BEARER_SECURITY,
        body: validated(verifyBatch.input.rest.meta({ examples: [BATCH_REQUEST_EXAMPLE] }), verifyBatch.input.invalid),
      },
    },
    async (request, reply) => {
      const body = await perform(verifyBatch, options.runner, request.body, callOf(request));
      await app.charge(request, reply);
      return body;
    },
  );

  app.get(
    '/v1/email-verify/verify',
    {
      config: { operation: verifySingle.id, auth: 'key' },
      schema: {
        ...verifySingleDocs,
        security: BEARER_SECURITY,
        querystring: validated(verifySingle.input.rest, verifySingle.input.invalid),
      },
    },
    async (request, reply) => {
      const result = await perform(verifySingle, options.runner, request.query, callOf(request));
      await app.charge(request, reply);
      return result;
    },
  );
  done();
};
