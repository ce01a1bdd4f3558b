/**
 * How a bad verify request is told to its caller: the batch body (`invalid_request`, or
 * `too_many_emails` over the limit) and the single-verify parameter (`invalid_parameter`).
 * The verify operations (operations/verify-*.ts) refuse their input with these, through both doors.
 */
import { ApiError, MAX_BATCH, invalidParameter } from '@svc/contracts';
import type { z } from 'zod';

const TOO_MANY_EMAILS_MESSAGE = `A batch may contain at most ${MAX_BATCH} addresses.`;

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
