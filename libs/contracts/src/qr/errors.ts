import type { z } from 'zod';
import { ApiError, invalidParameter } from '../errors.ts';
import { MAX_DATA_CODE_POINTS } from './params.ts';

/** The contract's error for a failed QR validation: the first issue names the parameter. */
export function qrValidationError(error: z.ZodError): ApiError {
  const issue = error.issues[0];
  if (issue === undefined) return new ApiError('invalid_parameter', 'Invalid parameters.');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '?';
    return invalidParameter(key, `Unknown parameter \`${key}\`.`);
  }
  const param = String(issue.path[0] ?? '?');
  if (issue.code === 'custom' && (issue.params as { contract?: string } | undefined)?.contract === 'content_too_long') {
    return new ApiError('content_too_long', `\`data\` may hold at most ${MAX_DATA_CODE_POINTS} characters.`, {
      details: { param, limit: MAX_DATA_CODE_POINTS },
    });
  }
  // zod 4 leaves the input out of issues: a missing value shows as `received undefined`.
  const message = issue.code === 'invalid_type' && /received undefined$/.test(issue.message) ? 'is required' : issue.message;
  return invalidParameter(param, `\`${param}\` ${message.replace(/^Invalid input: /, '')}`);
}
