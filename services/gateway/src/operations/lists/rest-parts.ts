/** What the list routes share in their OpenAPI operations: the path, the id parameter, the query's refusals. */
import { ApiError } from '@svc/contracts';
import { PARAMETER_MESSAGES, parameterError } from '@svc/lists/service';
import { z } from 'zod';
import { validated } from '../../plugins/validation.ts';

export const LISTS_PATH = '/v1/email-verify/lists';

export const NOT_METERED = 'Not metered: reading and cancelling lists cost nothing and are not rate-limited.';

export const queryError = parameterError({
  ...PARAMETER_MESSAGES,
  limit: 'limit must be an integer from 1 to 100.',
  format: 'format must be json or csv.',
  columns: 'columns must be default or full.',
});

export const idParams = validated(
  z.object({ id: z.string().describe('The list id, `lst_` and 24 hex digits.') }),
  () => new ApiError('not_found', 'No such list.'),
);
