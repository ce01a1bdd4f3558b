/** What the list tools share: the id argument and the refusals of the status, results and cancel tools. */
import { PARAMETER_MESSAGES, parameterError } from '@svc/lists/service';
import { z } from 'zod';

export const RESULTS_PAGE_MAX = 500;

export const idInput = z.object({ id: z.string().min(1).describe('The list id returned by the create tool (`lst_...`).') }).strict();

/** The status and results tools' arguments, refused in their own terms (the REST query's limits differ). */
export const argumentError = parameterError({
  id: 'id is required: the list id (`lst_...`) the create tool returned.',
  cursor: PARAMETER_MESSAGES.cursor,
  limit: `limit must be an integer from 1 to ${RESULTS_PAGE_MAX}.`,
});

export const OPEN_WORLD = { openWorldHint: true } as const;
