/**
 * Colours of a QR code: the accepted notations, their normal form (`#rrggbbaa`) and the rule that
 * the code stays readable. Standard readers look for dark modules on a lighter background, so
 * the dark colour (composited over the light one, the light one over white paper) must be the
 * darker of the two, by a WCAG 2 contrast ratio of at least 3:1.
 */
import { z } from 'zod';

const HEX_COLOUR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

/** The smallest contrast between the dark and the light modules as readers see them. */
export const MIN_CONTRAST_RATIO = 3;

/** `RGB`, `RGBA`, `RRGGBB`, `RRGGBBAA`, with or without `#`, any case → `#rrggbbaa`; else undefined. */
export function normaliseColour(value: string): string | undefined {
  const hex = HEX_COLOUR.exec(value)?.[1]?.toLowerCase();
  if (hex === undefined) return undefined;
  const long = hex.length <= 4 ? [...hex].map((digit) => digit + digit).join('') : hex;
  return `#${long.length === 6 ? `${long}ff` : long}`;
}

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

type Rgb = [number, number, number];

function channels(normalised: string): { rgb: Rgb; alpha: number } {
  const byte = (index: number) => parseInt(normalised.slice(1 + 2 * index, 3 + 2 * index), 16);
  return { rgb: [byte(0), byte(1), byte(2)], alpha: byte(3) / 255 };
}

/** `over` painted with its alpha onto the opaque `under` (sRGB values 0..255). */
const composite = (over: { rgb: Rgb; alpha: number }, under: Rgb): Rgb =>
  over.rgb.map((value, index) => value * over.alpha + under[index]! * (1 - over.alpha)) as Rgb;

/** WCAG 2 relative luminance of an opaque sRGB colour. */
function luminance(rgb: Rgb): number {
  const [r, g, b] = rgb.map((value) => {
    const c = value / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/**
 * How the two colours look on white paper: `ratio` is the WCAG 2 contrast ratio between the
 * composited dark and light colours, `darkIsDarker` whether the dark modules are the darker.
 */
export function contrastOf(dark: string, light: string): { ratio: number; darkIsDarker: boolean } {
  const paper = composite(channels(light), [255, 255, 255]);
  const modules = composite(channels(dark), paper);
  const [darkLuminance, lightLuminance] = [luminance(modules), luminance(paper)];
  const ratio = (Math.max(darkLuminance, lightLuminance) + 0.05) / (Math.min(darkLuminance, lightLuminance) + 0.05);
  return { ratio, darkIsDarker: darkLuminance < lightLuminance };
}

/** Why a colour pair cannot be read, as the end of a sentence about `dark`; undefined when it can. */
function unreadableColours(dark: string, light: string): string | undefined {
  const { ratio, darkIsDarker } = contrastOf(dark, light);
  // Two decimals, rounded down, so that a refused pair never reads as "3.00:1".
  const found = `${(Math.floor(ratio * 100) / 100).toFixed(2)}:1`;
  if (!darkIsDarker) {
    return `must be darker than \`light\` (as drawn on white): standard readers cannot scan light modules on a dark background (contrast found ${found}, at least ${MIN_CONTRAST_RATIO}:1 needed)`;
  }
  if (ratio < MIN_CONTRAST_RATIO) {
    return `must contrast with \`light\` (as drawn on white) by at least ${MIN_CONTRAST_RATIO}:1 for readers to scan the code; found ${found}`;
  }
  return undefined;
}

/**
 * Verdicts of unreadableColours by colour pair (`''` for readable): nearly every call sends the
 * defaults or one house style, and the verdict is pure. Bounded: emptied when it grows large.
 */
const verdicts = new Map<string, string>();
const VERDICTS_KEPT = 1_000;

function cachedVerdict(dark: string, light: string): string | undefined {
  const pair = dark + light;
  let verdict = verdicts.get(pair);
  if (verdict === undefined) {
    if (verdicts.size >= VERDICTS_KEPT) verdicts.clear();
    verdict = unreadableColours(dark, light) ?? '';
    verdicts.set(pair, verdict);
  }
  return verdict === '' ? undefined : verdict;
}

/** The cross-field colour rules of every QR route and tool: identical colours, then readability. */
export function distinctColours(value: { dark: string; light: string }, context: z.RefinementCtx): void {
  if (value.dark === value.light) {
    context.addIssue({ code: 'custom', path: ['light'], message: 'must differ from `dark`, or the code cannot be read' });
    return;
  }
  const problem = cachedVerdict(value.dark, value.light);
  if (problem !== undefined) context.addIssue({ code: 'custom', path: ['dark'], message: problem });
}
