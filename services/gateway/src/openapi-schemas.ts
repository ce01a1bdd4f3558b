import { ERROR_STATUS } from '@svc/contracts';
import { z } from 'zod';

export const errorBodySchema = z
  .object({
    error: z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...Array<keyof typeof ERROR_STATUS>]),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .describe('Every error: a machine-readable code and a human-readable message.');

/** Error statuses every metered route may answer, for the documentation. */
export const errorResponses = Object.fromEntries([400, 401, 429, 500, 503, 504].map((status) => [status, errorBodySchema]));
