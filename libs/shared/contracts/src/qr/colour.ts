/**
 * Colours of a QR code: the accepted notations, their normal form (`#rrggbbaa`) and the rule that
 * the code stays readable. Standard readers look for dark modules on a lighter background, so
 * the dark colour (composited over the light one, the light one over white paper) must be the
 * darker of the two, by a WCAG 2 contrast ratio of at least 3:1.
 */
import { z } from 'zod';
import { HEX_COLOUR, colourProblem, normaliseColour } from './rules.ts';

export { MIN_CONTRAST_RATIO, contrastOf, normaliseColour } from './rules.ts';

/**
 * How a `#` is sent: a query string must URL-encode it (`%23`), a JSON value (tool arguments)
 * carries it as it is; telling an agent to write `%23` in JSON makes it send an invalid colour.
 */
const HASH_NOTE = {
  query: 'with or without a leading # (send # as %23 in the query string)',
  json: 'as a JSON string with or without a leading # ("#336699" or "336699"; no URL encoding)',
} as const;

/**
 * A colour parameter: the pattern and the default are part of its JSON Schema (what OpenAPI and
 * the tool servers show); the value is then normalised to `#rrggbbaa`.
 */
export const colour = (fallback: string, what: string, carrier: keyof typeof HASH_NOTE) =>
  z
    .string()
    .regex(HEX_COLOUR, 'must be a hex colour such as 1a2b3c or 1a2b3c80 (RGB, RGBA, RRGGBB or RRGGBBAA)')
    .transform((value) => normaliseColour(value) ?? value)
    .prefault(fallback)
    .describe(`${what}: hex colour RGB, RGBA, RRGGBB or RRGGBBAA, ${HASH_NOTE[carrier]}. Default ${fallback}.`);

/**
 * Verdicts of colourProblem by colour pair (`null` for readable): nearly every call sends the
 * defaults or one house style, and the verdict is pure. Bounded: emptied when it grows large.
 */
const verdicts = new Map<string, ReturnType<typeof colourProblem> | null>();
const VERDICTS_KEPT = 1_000;

/** The cross-field colour rules of every QR route and tool: identical colours, then readability. */
export function distinctColours(value: { dark: string; light: string }, context: z.RefinementCtx): void {
  const pair = value.dark + value.light;
  let verdict = verdicts.get(pair);
  if (verdict === undefined) {
    if (verdicts.size >= VERDICTS_KEPT) verdicts.clear();
    verdict = colourProblem(value.dark, value.light) ?? null;
    verdicts.set(pair, verdict);
  }
  if (verdict !== null && verdict !== undefined) context.addIssue({ code: 'custom', path: [verdict[0]], message: verdict[1] });
}
