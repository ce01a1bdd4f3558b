/**
 * The two forms of an SVG body (render.ts): text to cross a queue, bytes in process. Both must be
 * the same document, byte for byte; the JSON matrix is text either way.
 */
import { describe, expect, it } from 'vitest';
import { qrBodyText, qrJobResultSchema, type QrJobPayload } from '@svc/contracts';
import { renderQr } from '../src/index.ts';

const payload = (data: string, format: 'svg' | 'json' = 'svg'): QrJobPayload => ({
  data,
  format,
  scale: 4,
  margin: 2,
  dark: '#102030ff',
  light: '#ffffff80',
});

describe('the rendered body', () => {
  it.each(['https://example.com/orders/0000000123?ref=newsletter', 'Grüße aus Köln 🚀', '7'.repeat(300)])(
    'is the same SVG as text and as bytes (%s)',
    (data) => {
      const text = renderQr(payload(data), 'text');
      const bytes = renderQr(payload(data), 'bytes');
      if (!text.ok || !bytes.ok) throw new Error('did not render');
      expect(typeof text.body).toBe('string');
      expect(Buffer.isBuffer(bytes.body)).toBe(true);
      expect(qrBodyText(bytes.body)).toBe(text.body);
      expect(Buffer.isBuffer(bytes.body) && Buffer.from(qrBodyText(text.body), 'utf8').equals(bytes.body)).toBe(true);
      // Both forms pass the job contract the gateway parses every result with.
      expect(qrJobResultSchema.safeParse(bytes).success).toBe(true);
      expect(qrJobResultSchema.safeParse(text).success).toBe(true);
    },
  );

  it('keeps the JSON matrix as text in either form', () => {
    const result = renderQr(payload('hello', 'json'), 'bytes');
    if (!result.ok) throw new Error('did not render');
    expect(typeof result.body).toBe('string');
  });

  it('is refused by the contract when it is neither text nor a Buffer', () => {
    const result = renderQr(payload('hello'), 'text');
    expect(qrJobResultSchema.safeParse({ ...result, body: new Uint8Array([60]) }).success).toBe(false);
  });
});
