/** `email-verify.single`: one address, run as a batch of one and answered as its one result. */
import { VERIFY_JOB, publicResult, singleVerifyQuerySchema } from '@svc/contracts';
import { singleQueryError } from '../errors/verify-input.ts';
import { defineOperation } from './operation.ts';

export const verifySingle = defineOperation({
  id: 'email-verify.single',
  input: { rest: singleVerifyQuerySchema, tool: singleVerifyQuerySchema, advertised: singleVerifyQuerySchema, invalid: singleQueryError },
  job: VERIFY_JOB,
  payload: ({ email }: { email: string }, call) => ({ emails: [email], ...(call.keyId === undefined ? {} : { keyId: call.keyId }) }),
  answer: ({ email }, job) => publicResult(email, job),
});
