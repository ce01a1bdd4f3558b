/**
 * The rendering parameters every QR route and tool takes, as query text (REST) or JSON (tools):
 * `data`, `format`, `scale`, `margin`, `dark`, `light`.
 */
import { z } from 'zod';
import { colour } from './colour.ts';
import { MAX_DATA_CODE_POINTS } from './rules.ts';

export { MARGIN, MAX_DATA_CODE_POINTS, SCALE } from './rules.ts';

export const data = z
  .string()
  .min(1)
  // Code points are never more than UTF-16 units: only a longer string needs counting.
  .refine((value) => value.length <= MAX_DATA_CODE_POINTS || [...value].length <= MAX_DATA_CODE_POINTS, {
    message: `\`data\` may hold at most ${MAX_DATA_CODE_POINTS} characters`,
    params: { contract: 'content_too_long' },
  })
  .describe(
    'Content to encode (text or URL), 1 to 800 characters; the encoded form must fit version 10 at level M (213 bytes in byte mode).',
  )
  // JSON Schema counts characters as code points, as the rule above does.
  .meta({ maxLength: MAX_DATA_CODE_POINTS, examples: ['https://example.com'] });

const range = (min: number, max: number) => `must be from ${min} to ${max}`;
/** Not a whole number (a fraction, text, -1 as query text, too many digits): the message still says what is allowed. */
const whole = (min: number, max: number) => `must be a whole number from ${min} to ${max}`;

/** Query values arrive as text: digits only become a number, anything else stays text and fails as "not a whole number". */
const wholeNumber = (value: unknown): unknown => (typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : value);

/**
 * An integer query parameter. Its JSON Schema (input side) is the integer it stands for, with its
 * range and default, which is what OpenAPI says of a query value; the text is read by `wholeNumber`.
 */
export const queryInt = (min: number, max: number, fallback: number, what: string) =>
  z
    .preprocess(
      wholeNumber,
      z
        .number({ error: whole(min, max) })
        .int(whole(min, max))
        .min(min, range(min, max))
        .max(max, range(min, max)),
    )
    .prefault(fallback)
    .describe(`${what}, ${min} to ${max} (default ${fallback}).`);

/** `true` and `false` as query text are the booleans; anything else stays text and fails. */
export const queryBoolean = (value: unknown): unknown => (value === 'true' ? true : value === 'false' ? false : value);

export const jsonInt = (min: number, max: number, fallback: number, what: string) =>
  z
    .number({ error: whole(min, max) })
    .int(whole(min, max))
    .min(min, range(min, max))
    .max(max, range(min, max))
    .default(fallback)
    .describe(`${what}, ${min} to ${max} (default ${fallback}).`);

/**
 * A whole number within a parameter's limits, as a job payload carries it (the request's own
 * schema gave it its default): the job's schema reads the same limits as the request's, so that
 * raising one raises both, in both modes.
 */
export const withinLimits = ([min, max]: readonly [number, number, ...unknown[]]) => z.number().int().min(min).max(max);

const DARK = ['#000000', 'Colour of the dark modules'] as const;
const LIGHT = ['#ffffff', 'Background colour (alpha 0 for transparent)'] as const;

/** The colours as query parameters (REST) and as JSON arguments (tools): only how `#` is sent differs. */
export const renderFields = { dark: colour(...DARK, 'query'), light: colour(...LIGHT, 'query') };
export const jsonRenderFields = { dark: colour(...DARK, 'json'), light: colour(...LIGHT, 'json') };
export const QR_FORMATS = ['svg', 'json'] as const;
export const format = z.enum(QR_FORMATS).default('svg').describe('`svg` (image) or `json` (module matrix).');
