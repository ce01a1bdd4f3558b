/**
 * The verify operations' REST door: the batch takes its input as the JSON body, the single
 * address as the query string; each answers the operation's answer as JSON.
 */
import { MAX_BATCH, batchResponseSchema, verifyResultSchema } from '@svc/contracts';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import {
  BATCH_BODY_ERRORS,
  BATCH_REQUEST_EXAMPLE,
  BATCH_RESPONSE_EXAMPLE,
  SINGLE_QUERY_ERRORS,
  SINGLE_RESPONSE_EXAMPLE,
} from '../openapi-examples.ts';
import { bodyErrors, json, meteredResponses } from '../openapi-schemas.ts';
import { callOf, type JobRunner } from '../operation.ts';
import { perform } from '../operations/operation.ts';
import { verifyBatch } from '../operations/verify-batch.ts';
import { verifySingle } from '../operations/verify-single.ts';
import { validated } from '../plugins/validation.ts';
import { BEARER_SECURITY } from './guards.ts';

const VERDICTS_IN_SHORT =
  'Each result has a verdict (`deliverable` only when the mail server accepted that exact mailbox on a domain that is neither ' +
  'catch-all nor disposable; `undeliverable` only on proof; anything uncertain `risky`), a score 0-100, one reason code and the ' +
  'checks made (`null` for a check not made).';

export const verifyRoutes: FastifyPluginCallbackZod<{ runner: JobRunner }> = (app, options, done) => {
  app.post(
    '/v1/email-verify/verify/batch',
    {
      config: { operation: verifyBatch.id, auth: 'key' },
      schema: {
        operationId: 'verifyEmailBatch',
        tags: ['email-verify'],
        summary: 'Verify a batch of email addresses',
        description:
          `Verifies 1 to ${MAX_BATCH} addresses concurrently and answers one result per entry, in input order, with a summary per ` +
          `verdict. Duplicates get their own result but are probed once; a malformed entry is a result (\`invalid_syntax\`), never an ` +
          `error. ${VERDICTS_IN_SHORT} The batch answers within its deadline (30 s by default); addresses still open then are ` +
          '`risky`/`timeout`. One price per call whatever the count.',
        security: BEARER_SECURITY,
        body: validated(verifyBatch.input.rest.meta({ examples: [BATCH_REQUEST_EXAMPLE] }), verifyBatch.input.invalid),
        response: {
          ...meteredResponses(
            {
              description: 'One result per submitted entry, in input order, and the count per verdict.',
              content: json(batchResponseSchema, BATCH_RESPONSE_EXAMPLE),
            },
            {
              description: `The body is missing, not JSON, not \`{ "emails": [...] }\` with 1 to ${MAX_BATCH} strings (\`invalid_request\`), or holds more than ${MAX_BATCH} entries (\`too_many_emails\`).`,
              examples: BATCH_BODY_ERRORS,
            },
          ),
          ...bodyErrors(),
        },
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
        operationId: 'verifyEmail',
        tags: ['email-verify'],
        summary: 'Verify one email address',
        description: `Verifies one address and answers one result of the batch shape. ${VERDICTS_IN_SHORT}`,
        security: BEARER_SECURITY,
        querystring: validated(verifySingle.input.rest, verifySingle.input.invalid),
        response: meteredResponses(
          { description: 'The result for the address.', content: json(verifyResultSchema, SINGLE_RESPONSE_EXAMPLE) },
          {
            description: '`email` is missing or empty, or an unknown parameter was sent (`invalid_parameter`).',
            examples: SINGLE_QUERY_ERRORS,
          },
        ),
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
