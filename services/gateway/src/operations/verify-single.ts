/** `email-verify.single`: one address, run as a batch of one and answered as its one result. */
import { VERIFY_JOB, publicResult, singleVerifyQuerySchema, verifyResultSchema } from '@svc/contracts';
import { singleQueryError } from '../errors/verify-input.ts';
import { SINGLE_QUERY_ERRORS, SINGLE_RESPONSE_EXAMPLE } from '../openapi-examples.ts';
import { json, meteredResponses } from '../openapi-schemas.ts';
import { defineOperation } from './operation.ts';
import { VERDICTS_IN_SHORT } from './verify-verdicts.ts';

export const verifySingle = defineOperation({
  id: 'email-verify.single',
  input: { rest: singleVerifyQuerySchema, tool: singleVerifyQuerySchema, advertised: singleVerifyQuerySchema, invalid: singleQueryError },
  job: VERIFY_JOB,
  payload: ({ email }: { email: string }, call) => ({ emails: [email], ...(call.keyId === undefined ? {} : { keyId: call.keyId }) }),
  answer: ({ email }, job) => publicResult(email, job),
});

/** Its REST route's OpenAPI words (the route adds its security and the validated query). */
export const verifySingleDocs = {
  operationId: 'verifyEmail',
  tags: ['email-verify'],
  summary: 'Verify one email address',
  description: `Verifies one address and answers one result of the batch shape. ${VERDICTS_IN_SHORT}`,
  response: meteredResponses(
    { description: 'The result for the address.', content: json(verifyResultSchema, SINGLE_RESPONSE_EXAMPLE) },
    {
      description: '`email` is missing or empty, or an unknown parameter was sent (`invalid_parameter`).',
      examples: SINGLE_QUERY_ERRORS,
    },
  ),
};
