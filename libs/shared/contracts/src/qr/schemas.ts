/**
 * The request schemas of QR generation: the query strings of `GET /v1/qr/qr` and `GET /v1/qr/wifi`
 * and the arguments of the `qr_generate` and `qr_wifi` tools (the same rules, JSON-typed), each
 * producing the job payload.
 */
import { z } from 'zod';
import { distinctColours } from './colour.ts';
import type { QrJobPayload } from './job.ts';
import { MARGIN, SCALE, data, format, jsonInt, jsonRenderFields, queryBoolean, queryInt, renderFields } from './params.ts';
import { password, security, ssid, wifiData, wifiRules } from './wifi.ts';

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
      .preprocess(queryBoolean, z.boolean({ error: 'must be true or false' }))
      .prefault(false)
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

/** MCP tool arguments: JSON values, SVG and PNG always. */
/** The tool arguments' object (what tool servers advertise); `qrToolInputSchema` adds the cross-field rules. */
export const qrToolInputObject = z.object({ data, scale: jsonInt(...SCALE), margin: jsonInt(...MARGIN), ...jsonRenderFields }).strict();
export const qrToolInputSchema = qrToolInputObject
  .superRefine(distinctColours)
  .transform((value): QrJobPayload => ({ ...value, format: 'svg', png: true }));

export const wifiToolInputObject = z
  .object({
    ssid,
    password,
    security,
    hidden: z.boolean().default(false).describe('The network hides its name (default false).'),
    scale: jsonInt(...SCALE),
    margin: jsonInt(...MARGIN),
    ...jsonRenderFields,
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
    png: true,
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
