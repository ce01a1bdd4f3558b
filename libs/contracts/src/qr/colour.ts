/**
 * Colours of a QR code: the accepted notations, their normal form (`#rrggbbaa`) and the rule that
 * dark and light must differ.
 */
import { z } from 'zod';

const HEX_COLOUR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

/** `RGB`, `RGBA`, `RRGGBB`, `RRGGBBAA`, with or without `#`, any case → `#rrggbbaa`; else undefined. */
export function normaliseColour(value: string): string | undefined {
  const hex = HEX_COLOUR.exec(value)?.[1]?.toLowerCase();
  if (hex === undefined) return undefined;
  const long = hex.length <= 4 ? [...hex].map((digit) => digit + digit).join('') : hex;
  return `#${long.length === 6 ? `${long}ff` : long}`;
}

/**
 * A colour parameter: the pattern and the default are part of its JSON Schema (what OpenAPI and
 * the tool servers show); the value is then normalised to `#rrggbbaa`.
 */
export const colour = (fallback: string, what: string) =>
  z
    .string()
    .regex(HEX_COLOUR, 'must be a hex colour like #1a2b3c or #1a2b3c80')
    .transform((value) => normaliseColour(value) ?? value)
    .prefault(fallback)
    .describe(`${what}: hex colour RGB, RGBA, RRGGBB or RRGGBBAA, with or without a leading # (send # as %23). Default ${fallback}.`);

export function distinctColours(value: { dark: string; light: string }, context: z.RefinementCtx): void {
  if (value.dark === value.light) {
    context.addIssue({ code: 'custom', path: ['light'], message: '`light` and `dark` must differ, or the code cannot be read' });
  }
}
