/** The QR job: what the gateway sends to a qr-worker and what comes back. */
import { z } from 'zod';
import type { JobKind } from '../job-kind.ts';

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

export const qrJobPayloadSchema = z.object({
  data: z.string().min(1),
  format: z.enum(['svg', 'json']),
  scale: z.number().int().min(1).max(40),
  margin: z.number().int().min(0).max(20),
  dark: z.string().regex(/^#[0-9a-f]{8}$/),
  light: z.string().regex(/^#[0-9a-f]{8}$/),
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
    /**
     * The body: text as it crosses a queue, or (SVG, in process) the bytes themselves: a Buffer
     * lives outside the JavaScript heap and goes to the socket as it is, where an SVG string was
     * flattened, copied into the socket's write and kept long enough for the garbage collector to
     * promote it (about 6 KB a call: `npm run bench:qr`, embedded, --trace-gc-nvp).
     */
    body: z.union([z.string(), z.custom<Buffer>((value) => Buffer.isBuffer(value), 'a Buffer')]),
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

/** A rendered body as text (the SVG of a tool's text block, a body sent over a queue). */
export const qrBodyText = (body: string | Buffer): string => (typeof body === 'string' ? body : body.toString('latin1'));

export const QR_JOB: JobKind<QrJobPayload, QrJobResult> = { name: 'qr', payload: qrJobPayloadSchema, result: qrJobResultSchema };
