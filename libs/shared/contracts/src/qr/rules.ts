/**
 * The rules of a QR code that need no schema: the content limit, the rendering ranges, the colour
 * notations and the readability rule, and the wifi payload with its password rules. The schemas
 * (schemas.ts, zod) apply them to requests; the web console applies the same functions to its
 * form, so that its in-browser preview refuses exactly what the API would refuse, without
 * bundling zod (@svc/contracts/rules).
 */

export const MAX_DATA_CODE_POINTS = 800;

/** `[min, max, default, what]` of the integer rendering parameters. */
export const SCALE = [1, 40, 8, 'Pixels per module'] as const;
export const MARGIN = [0, 20, 4, 'Quiet zone in modules (below 4 harms scanning)'] as const;

export const HEX_COLOUR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

/** The smallest contrast between the dark and the light modules as readers see them. */
export const MIN_CONTRAST_RATIO = 3;

/** `RGB`, `RGBA`, `RRGGBB`, `RRGGBBAA`, with or without `#`, any case → `#rrggbbaa`; else undefined. */
export function normaliseColour(value: string): string | undefined {
  const hex = HEX_COLOUR.exec(value)?.[1]?.toLowerCase();
  if (hex === undefined) return undefined;
  const long = hex.length <= 4 ? [...hex].map((digit) => digit + digit).join('') : hex;
  return `#${long.length === 6 ? `${long}ff` : long}`;
}

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

/** Why a pair of normalised colours cannot be read, as the end of a sentence about `dark`; undefined when it can. */
export function unreadableColours(dark: string, light: string): string | undefined {
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

/** The colour pair's problem as `[parameter, end of sentence]`, in the order the API checks: identical, then unreadable. */
export function colourProblem(dark: string, light: string): ['dark' | 'light', string] | undefined {
  if (dark === light) return ['light', 'must differ from `dark`, or the code cannot be read'];
  const problem = unreadableColours(dark, light);
  return problem === undefined ? undefined : ['dark', problem];
}

export const SECURITY = { wpa: 'WPA', wep: 'WEP', nopass: 'nopass' } as const;
export type Security = (typeof SECURITY)[keyof typeof SECURITY];
const HEX = /^[0-9a-fA-F]+$/;

/** `\ ; , : "` are escaped by a backslash in WIFI: payloads. */
export const escapeWifi = (value: string): string => value.replace(/([\\;,:"])/g, '\\$1');

export function buildWifiPayload(ssid: string, security: Security, password: string, hidden: boolean): string {
  // With nopass the P field stays, empty: the shape docs/api.md gives ("Wifi payload"), and what phone readers accept.
  return `WIFI:T:${security};S:${escapeWifi(ssid)};P:${escapeWifi(password)};H:${hidden};;`;
}

/** The network name's rule: 1 to 32 bytes of UTF-8 (TextEncoder, so that a browser applies it too). */
export const ssidFits = (value: string): boolean => {
  const bytes = new TextEncoder().encode(value).length;
  return bytes >= 1 && bytes <= 32;
};
export const SSID_PROBLEM = 'must have 1 to 32 bytes of UTF-8';

/** What is wrong with the password for this security type, as the end of a sentence; undefined when nothing. */
export function passwordProblem(security: Security, password: string | undefined): string | undefined {
  if (security === 'nopass') return password === undefined ? undefined : 'cannot be sent with security=nopass';
  if (password === undefined || password === '') return `is required with security=${security}`;
  const length = [...password].length;
  if (security === 'WPA') {
    return (length >= 8 && length <= 63) || (password.length === 64 && HEX.test(password))
      ? undefined
      : 'must have 8 to 63 characters, or 64 hex digits, with WPA';
  }
  return [5, 13].includes(length) || ([10, 26].includes(password.length) && HEX.test(password))
    ? undefined
    : 'must have 5 or 13 characters, or 10 or 26 hex digits, with WEP';
}
