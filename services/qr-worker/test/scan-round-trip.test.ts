/**
 * Every code we render must scan: SVGs rasterised by resvg and the JSON matrix, decoded by jsQR,
 * back to exactly the submitted data, across scales, margins, colours, UTF-8 and the size limits.
 */
import { describe, expect, it } from 'vitest';
import { qrQuerySchema, wifiQuerySchema, type QrJobPayload } from '@svc/contracts';
import { scanModules, scanSvg } from '@svc/testkit';
import { renderQr } from '../src/index.ts';

const job = (query: Record<string, string>): QrJobPayload => qrQuerySchema.parse(query);

function svgOf(payload: QrJobPayload): string {
  const result = renderQr(payload);
  if (!result.ok) throw new Error(result.error.message);
  return result.body;
}

describe('SVG scan round trip', () => {
  it.each([2, 3, 8, 40])('scale %i', (scale) => {
    const data = 'https://example.com/?q=scan';
    expect(scanSvg(svgOf(job({ data, scale: String(scale) })))).toBe(data);
  });

  it.each([0, 1, 4, 20])('margin %i (a white border is added before decoding a margin below 4)', (margin) => {
    const data = 'margin test';
    expect(scanSvg(svgOf(job({ data, margin: String(margin), scale: '4' })), { borderModules: 4 })).toBe(data);
  });

  it.each([
    ['#000', '#fff'],
    ['1a237e', 'FFF8E1'],
    ['%23000000cc', '#ffffffff'.replace('#', '')],
    ['#000000', '#ffffff00'],
    ['#222d', 'eeef'],
  ])('colours dark=%s light=%s (alpha composited on white)', (dark, light) => {
    const data = 'colours';
    expect(scanSvg(svgOf(job({ data, dark: decodeURIComponent(dark), light })))).toBe(data);
  });

  it.each([
    ['UTF-8 text', 'Grüße aus Köln — façade, naïve'],
    ['emoji', 'QR 🚀✨ 👩‍💻'],
    ['CJK', '二维码测试'],
    ['213 bytes at the limit', 'a'.repeat(213)],
    ['513 digits at the limit', '9'.repeat(513)],
    ['upper-case alphanumeric', 'HTTPS://EXAMPLE.COM/ABC-123'],
  ])('%s', (_label, data) => {
    expect(scanSvg(svgOf(job({ data, scale: '3' })))).toBe(data);
  });

  it('over the limits: content_too_long', () => {
    for (const data of ['a'.repeat(214), '9'.repeat(514), 'é'.repeat(107)]) {
      const result = renderQr(job({ data }));
      expect(result).toMatchObject({ ok: false, error: { error: 'content_too_long' } });
    }
  });

  it('wifi payloads with every escaped character scan to the escaped payload', () => {
    const payload = wifiQuerySchema.parse({ ssid: 'a\\b;c,d:e"f', password: 'p\\;,:"word', security: 'wpa', hidden: 'true' });
    expect(payload.data).toBe('WIFI:T:WPA;S:a\\\\b\\;c\\,d\\:e\\"f;P:p\\\\\\;\\,\\:\\"word;H:true;;');
    expect(scanSvg(svgOf(payload))).toBe(payload.data);
  });
});

describe('the JSON matrix', () => {
  it.each(['hello', 'Grüße 🚀', '1'.repeat(513)])('decodes to the data: %s', (data) => {
    const result = renderQr(job({ data, format: 'json' }));
    if (!result.ok) throw new Error('render failed');
    const body = JSON.parse(result.body) as { version: number; size: number; modules: number[][]; margin: number; ecc: string };
    expect(body.size).toBe(17 + 4 * body.version);
    expect(body.modules).toHaveLength(body.size);
    expect(scanModules(body.modules)).toBe(data);
  });
});

describe('the SVG itself', () => {
  it('has pixel width/height, a module viewBox, crisp edges and one path', () => {
    const svg = svgOf(job({ data: 'x', scale: '10', margin: '2' }));
    expect(svg).toMatch(
      /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="250" height="250" viewBox="0 0 25 25" shape-rendering="crispEdges">/,
    );
    expect(svg.match(/<path /g)).toHaveLength(1);
    expect(svg).not.toContain('stroke');
  });

  it('a transparent background draws no rectangle; alpha becomes fill-opacity', () => {
    const svg = svgOf(job({ data: 'x', light: 'fff0', dark: '00000080' }));
    expect(svg).not.toContain('<rect');
    expect(svg).toContain('fill="#000000" fill-opacity="0.502"');
  });
});
