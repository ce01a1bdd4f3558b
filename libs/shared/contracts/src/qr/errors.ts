import type { z } from 'zod';
import { ApiError, invalidParameter } from '../errors.ts';
import { MAX_DATA_CODE_POINTS } from './params.ts';

const TYPE_NAMES: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
};

/** Messages our schemas give are written for people; zod's own defaults ("Invalid input: ...", "Too small: ...") are not. */
const isZodDefault = (message: string): boolean => /^(Invalid|Too (small|big)|Expected)/.test(message);

/** What is wrong with the parameter, as the end of a sentence that starts with its name. */
function problemOf(issue: z.core.$ZodIssue): string {
  // zod 4 leaves the input out of issues: a missing value shows as `received undefined`.
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) return 'is required';
  if (!isZodDefault(issue.message)) return issue.message;
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map(String).join(', ')}`;
    case 'too_small':
      return issue.origin === 'string' ? 'must not be empty' : `must be at least ${String(issue.minimum)}`;
    case 'too_big':
      return issue.origin === 'string' ? 'is too long' : `must be at most ${String(issue.maximum)}`;
    default:
      return 'is not valid';
  }
}

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
  return invalidParameter(param, `\`${param}\` ${problemOf(issue)}.`);
}
