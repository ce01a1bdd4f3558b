/**
 * The rendering parameters every QR route and tool takes, as query text (REST) or JSON (tools):
 * `data`, `format`, `scale`, `margin`, `dark`, `light`.
 */
import { z } from 'zod';
import { colour } from './colour.ts';

export const MAX_DATA_CODE_POINTS = 800;

export const data = z
  .string()
  .min(1)
  .refine((value) => [...value].length <= MAX_DATA_CODE_POINTS, {
    message: `\`data\` may hold at most ${MAX_DATA_CODE_POINTS} characters`,
    params: { contract: 'content_too_long' },
  })
  .describe(
    'Content to encode (text or URL), 1 to 800 characters; the encoded form must fit version 10 at level M (213 bytes in byte mode).',
  );

const range = (min: number, max: number) => `must be from ${min} to ${max}`;

/** Query values arrive as text: integers are digits only, then range-checked. */
export const queryInt = (min: number, max: number, fallback: number, what: string) =>
  z
    .string()
    .regex(/^\d{1,6}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, range(min, max)).max(max, range(min, max)))
    .default(fallback)
    .describe(`${what}, ${min} to ${max} (default ${fallback}).`);

export const jsonInt = (min: number, max: number, fallback: number, what: string) =>
  z
    .number()
    .int('must be a whole number')
    .min(min, range(min, max))
    .max(max, range(min, max))
    .default(fallback)
    .describe(`${what}, ${min} to ${max} (default ${fallback}).`);

export const SCALE = [1, 40, 8, 'Pixels per module'] as const;
export const MARGIN = [0, 20, 4, 'Quiet zone in modules (below 4 harms scanning)'] as const;

export const renderFields = {
  dark: colour('#000000', 'Colour of the dark modules'),
  light: colour('#ffffff', 'Background colour (alpha 0 for transparent)'),
};
export const format = z.enum(['svg', 'json']).default('svg').describe('`svg` (image) or `json` (module matrix).');
