/**
 * `email-verify.batch`: 1 to 100 addresses in one job. The REST body and the tool arguments are
 * the same object; the answer is one result per entry, in input order, with the summary.
 */
import { MAX_BATCH, VERIFY_JOB, batchRequestSchema, batchResponseSchema, buildBatchResponse, publicResults } from '@svc/contracts';
import { batchBodyError } from '../errors/verify-input.ts';
import { BATCH_BODY_ERRORS, BATCH_RESPONSE_EXAMPLE } from '../openapi-examples.ts';
import { bodyErrors, json, meteredResponses } from '../openapi-schemas.ts';
import { defineOperation } from './operation.ts';
import { VERDICTS_IN_SHORT } from './verify-verdicts.ts';

export const verifyBatch = defineOperation({
  id: 'email-verify.batch',
  input: { rest: batchRequestSchema, tool: batchRequestSchema, advertised: batchRequestSchema, invalid: batchBodyError },
  job: VERIFY_JOB,
  payload: ({ emails }: { emails: string[] }, call) => ({ emails, ...(call.keyId === undefined ? {} : { keyId: call.keyId }) }),
  answer: ({ emails }, job) => buildBatchResponse(publicResults(emails, job)),
});

/** Its REST route's OpenAPI words (the route adds its security and the validated body). */
export const verifyBatchDocs = {
  operationId: 'verifyEmailBatch',
  tags: ['email-verify'],
  summary: 'Verify a batch of email addresses',
  description:
    `Verifies 1 to ${MAX_BATCH} addresses concurrently and answers one result per entry, in input order, with a summary per ` +
    `verdict. Duplicates get their own result but are probed once; a malformed entry is a result (\`invalid_syntax\`), never an ` +
    `error. ${VERDICTS_IN_SHORT} The batch answers within its deadline (30 s by default); addresses still open then are ` +
    '`risky`/`timeout`. One price per call whatever the count.',
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
};
