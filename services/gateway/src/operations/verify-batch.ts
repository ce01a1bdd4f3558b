/**
 * `email-verify.batch`: 1 to 100 addresses in one job. The REST body and the tool arguments are
 * the same object; the answer is one result per entry, in input order, with the summary.
 */
import { VERIFY_JOB, batchRequestSchema, buildBatchResponse, publicResults } from '@svc/contracts';
import { batchBodyError } from '../errors/verify-input.ts';
import { defineOperation } from './operation.ts';

export const verifyBatch = defineOperation({
  id: 'email-verify.batch',
  input: { rest: batchRequestSchema, tool: batchRequestSchema, advertised: batchRequestSchema, invalid: batchBodyError },
  job: VERIFY_JOB,
  payload: ({ emails }: { emails: string[] }, call) => ({ emails, ...(call.keyId === undefined ? {} : { keyId: call.keyId }) }),
  answer: ({ emails }, job) => buildBatchResponse(publicResults(emails, job)),
});
