/**
 * QR generation's contract (decisions.md "QR generate", "QR wifi"): the query schemas the gateway
 * validates, the tool-argument schemas of the MCP tools (same rules, JSON-typed), the job that
 * crosses to the qr-worker, and the mapping of validation issues to the contract's errors.
 */
import { z } from 'zod';
import { ApiError, invalidParameter } from '../errors.ts';
import type { JobKind } from '../job-kind.ts';

export const MAX_DATA_CODE_POINTS = 800;
const HEX_COLOUR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

/** `RGB`, `RGBA`, `RRGGBB`, `RRGGBBAA`, with or without `#`, any case → `#rrggbbaa`; else undefined. */
export function normaliseColour(value: string): string | undefined {
  const hex = HEX_COLOUR.exec(value)?.[1]?.toLowerCase();
  if (hex === undefined) return undefined;
  const long = hex.length <= 4 ? [...hex].map((digit) => digit + digit).join('') : hex;
  return `#${long.length === 6 ? `${long}ff` : long}`;
}

const colour = (fallback: string, what: string) =>
  z
    .string()
    .describe(`${what}: hex colour RGB, RGBA, RRGGBB or RRGGBBAA, with or without a leading # (send # as %23). Default ${fallback}.`)
    .transform((value, context) => {
      const normalised = normaliseColour(value);
      if (normalised === undefined) {
        context.addIssue({ code: 'custom', message: `must be a hex colour like #1a2b3c or #1a2b3c80` });
        return z.NEVER;
      }
      return normalised;
    })
    .default(normaliseColour(fallback)!);

const data = z
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
const queryInt = (min: number, max: number, fallback: number, what: string) =>
  z
    .string()
    .regex(/^\d{1,6}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, range(min, max)).max(max, range(min, max)))
    .default(fallback)
    .describe(`${what}, ${min} to ${max} (default ${fallback}).`);

const jsonInt = (min: number, max: number, fallback: number, what: string) =>
  z
    .number()
    .int('must be a whole number')
    .min(min, range(min, max))
    .max(max, range(min, max))
    .default(fallback)
    .describe(`${what}, ${min} to ${max} (default ${fallback}).`);

const SCALE = [1, 40, 8, 'Pixels per module'] as const;
const MARGIN = [0, 20, 4, 'Quiet zone in modules (below 4 harms scanning)'] as const;

const renderFields = {
  dark: colour('#000000', 'Colour of the dark modules'),
  light: colour('#ffffff', 'Background colour (alpha 0 for transparent)'),
};
const format = z.enum(['svg', 'json']).default('svg').describe('`svg` (image) or `json` (module matrix).');

export interface QrJobPayload {
  data: string;
  format: 'svg' | 'json';
  scale: number;
  margin: number;
  /** `#rrggbbaa` */
  dark: string;
  light: string;
}

function distinctColours(value: { dark: string; light: string }, context: z.RefinementCtx): void {
  if (value.dark === value.light) {
    context.addIssue({ code: 'custom', path: ['light'], message: '`light` and `dark` must differ, or the code cannot be read' });
  }
}

// ---- wifi ----------------------------------------------------------------------------------

const SECURITY = { wpa: 'WPA', wep: 'WEP', nopass: 'nopass' } as const;
type Security = (typeof SECURITY)[keyof typeof SECURITY];
const HEX = /^[0-9a-fA-F]+$/;

/** `\ ; , : "` are escaped by a backslash in WIFI: payloads. */
export const escapeWifi = (value: string): string => value.replace(/([\\;,:"])/g, '\\$1');

export function buildWifiPayload(ssid: string, security: Security, password: string, hidden: boolean): string {
  // With nopass the P field stays, empty: the shape decisions.md gives, and what phone readers accept.
  return `WIFI:T:${security};S:${escapeWifi(ssid)};P:${escapeWifi(password)};H:${hidden};;`;
}

function passwordProblem(security: Security, password: string | undefined): string | undefined {
  if (security === 'nopass') return password === undefined ? undefined : 'a password cannot be sent with security=nopass';
  if (password === undefined || password === '') return `a password is required with security=${security}`;
  const length = [...password].length;
  if (security === 'WPA') {
    return (length >= 8 && length <= 63) || (password.length === 64 && HEX.test(password))
      ? undefined
      : 'a WPA password has 8 to 63 characters, or 64 hex digits';
  }
  return [5, 13].includes(length) || ([10, 26].includes(password.length) && HEX.test(password))
    ? undefined
    : 'a WEP password has 5 or 13 characters, or 10 or 26 hex digits';
}

const ssid = z
  .string()
  .refine((value) => {
    const bytes = Buffer.byteLength(value, 'utf8');
    return bytes >= 1 && bytes <= 32;
  }, 'the network name has 1 to 32 bytes of UTF-8')
  .describe('Network name (SSID), 1 to 32 bytes of UTF-8.');
const password = z
  .string()
  .optional()
  .describe(
    'Network password; required unless security=nopass (WPA: 8-63 characters or 64 hex digits; WEP: 5 or 13 characters or 10 or 26 hex digits).',
  );
const security = z
  .string()
  .transform((value, context) => {
    const found = SECURITY[value.toLowerCase() as keyof typeof SECURITY];
    if (found === undefined) {
      context.addIssue({ code: 'custom', message: 'must be WPA, WEP or nopass' });
      return z.NEVER;
    }
    return found;
  })
  .default('WPA')
  .describe('WPA (default), WEP or nopass; case-insensitive.');

interface WifiFields {
  ssid: string;
  password?: string | undefined;
  security: Security;
  hidden: boolean;
}

function wifiRules(value: WifiFields, context: z.RefinementCtx): void {
  const problem = passwordProblem(value.security, value.password);
  if (problem !== undefined) context.addIssue({ code: 'custom', path: ['password'], message: problem });
}

const wifiData = (value: WifiFields) => buildWifiPayload(value.ssid, value.security, value.password ?? '', value.hidden);

// ---- the four schemas -------------------------------------------------------------------

export const qrQuerySchema = z
  .object({ data, format, scale: queryInt(...SCALE), margin: queryInt(...MARGIN), ...renderFields })
  .strict()
  .superRefine(distinctColours)
  .transform((value): QrJobPayload => value);

export const wifiQuerySchema = z
  .object({
    ssid,
    password,
    security,
    hidden: z
      .enum(['true', 'false'])
      .default('false')
      .transform((value) => value === 'true')
      .describe('The network hides its name (default false).'),
    format,
    scale: queryInt(...SCALE),
    margin: queryInt(...MARGIN),
    ...renderFields,
  })
  .strict()
  .superRefine((value, context) => {
    wifiRules(value, context);
    distinctColours(value, context);
  })
  .transform((value): QrJobPayload => ({
    data: wifiData(value),
    format: value.format,
    scale: value.scale,
    margin: value.margin,
    dark: value.dark,
    light: value.light,
  }));

/** MCP tool arguments: JSON values, SVG always. */
/** The tool arguments' object (what tool servers advertise); `qrToolInputSchema` adds the cross-field rules. */
export const qrToolInputObject = z.object({ data, scale: jsonInt(...SCALE), margin: jsonInt(...MARGIN), ...renderFields }).strict();
export const qrToolInputSchema = qrToolInputObject
  .superRefine(distinctColours)
  .transform((value): QrJobPayload => ({ ...value, format: 'svg' }));

export const wifiToolInputObject = z
  .object({
    ssid,
    password,
    security,
    hidden: z.boolean().default(false).describe('The network hides its name (default false).'),
    scale: jsonInt(...SCALE),
    margin: jsonInt(...MARGIN),
    ...renderFields,
  })
  .strict();
export const wifiToolInputSchema = wifiToolInputObject
  .superRefine((value, context) => {
    wifiRules(value, context);
    distinctColours(value, context);
  })
  .transform((value): QrJobPayload => ({
    data: wifiData(value),
    format: 'svg',
    scale: value.scale,
    margin: value.margin,
    dark: value.dark,
    light: value.light,
  }));

export const qrToolOutputSchema = z
  .object({
    svg: z.string().describe('The QR code as an SVG image'),
    version: z.number().int().describe('QR version, 1 to 10'),
    size: z.number().int().describe('Modules per side, quiet zone excluded'),
    margin: z.number().int().describe('Quiet zone in modules'),
  })
  .strict();

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
  // zod 4 leaves the input out of issues: a missing value shows as `received undefined`.
  const message = issue.code === 'invalid_type' && /received undefined$/.test(issue.message) ? 'is required' : issue.message;
  return invalidParameter(param, `\`${param}\` ${message.replace(/^Invalid input: /, '')}`);
}

// ---- the job --------------------------------------------------------------------------------

export const qrJobPayloadSchema = z.object({
  data: z.string().min(1),
  format: z.enum(['svg', 'json']),
  scale: z.number().int().min(1).max(40),
  margin: z.number().int().min(0).max(20),
  dark: z.string().regex(/^#[0-9a-f]{8}$/),
  light: z.string().regex(/^#[0-9a-f]{8}$/),
});

export const qrJobResultSchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    version: z.number().int(),
    size: z.number().int(),
    margin: z.number().int(),
    format: z.enum(['svg', 'json']),
    contentType: z.string(),
    body: z.string(),
  }),
  z.object({
    ok: z.literal(false),
    error: z.object({
      error: z.enum(['content_too_long', 'invalid_parameter']),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  }),
]);
export type QrJobResult = z.infer<typeof qrJobResultSchema>;

export const QR_JOB: JobKind<QrJobPayload, QrJobResult> = { name: 'qr', payload: qrJobPayloadSchema, result: qrJobResultSchema };
