/** The QR job: what the gateway sends to a qr-worker and what comes back. */
import { z } from 'zod';
import type { JobKind } from '../job-kind.ts';
import { data, MARGIN, QR_FORMATS, SCALE, withinLimits } from './params.ts';

export interface QrJobPayload {
  data: string;
  format: 'svg' | 'json';
  scale: number;
  margin: number;
  /** `#rrggbbaa` */
  dark: string;
  light: string;
  /**
   * Also render the code as PNG (the tool servers' `image` block). The worker renders it beside
   * the SVG, from the matrix it already holds; REST answers never ask for it.
   */
  png?: boolean;
}

/** The colours in their normal form (`normaliseColour`): the request schemas have normalised them. */
const NORMAL_COLOUR = /^#[0-9a-f]{8}$/;

/**
 * Derived from the request parameters' own rules and limits (params.ts): a worker parses what it
 * takes off Redis with these, so a limit kept here apart from the request's would refuse, only
 * in distributed mode, what the gateway accepted.
 */
export const qrJobPayloadSchema = z.object({
  data,
  format: z.enum(QR_FORMATS),
  scale: withinLimits(SCALE),
  margin: withinLimits(MARGIN),
  dark: z.string().regex(NORMAL_COLOUR),
  light: z.string().regex(NORMAL_COLOUR),
  png: z.boolean().optional(),
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
    /** Base64 PNG of the same code, when the payload asked for it. */
    png: z.string().optional(),
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

export const QR_JOB: JobKind<QrJobPayload, QrJobResult> = {
  name: 'qr',
  payload: qrJobPayloadSchema,
  result: qrJobResultSchema,
  bundled: true,
};
