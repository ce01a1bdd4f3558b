/**
 * The QR studio's preview and its refusals, against the service's own: the SVG drawn in the
 * browser is the one the qr-worker renders for the same request, byte for byte, and a form the
 * API would refuse is refused here with the API's message, so that a preview never shows what a
 * download would not give.
 */
import { qrQuerySchema, qrValidationError, wifiQuerySchema } from '@svc/contracts';
import { renderQr } from '@svc/qr-worker';
import { scanSvg } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { encode, fileNameOf, previewSvg, printSide, requestOf, type Content, type Look } from '../src/qr/draw.ts';

const look = (overrides: Partial<Look> = {}): Look => ({ scale: '8', margin: '4', dark: '#000000', light: '#ffffff', ...overrides });

/** What the API answers for the same query: its SVG, or its refusal's message. */
function api(content: Content, style: Look): { svg?: string; message?: string } {
  const query =
    content.kind === 'text'
      ? { data: content.data, ...style }
      : {
          ssid: content.ssid,
          ...(content.security === 'nopass' ? {} : { password: content.password }),
          security: content.security,
          hidden: String(content.hidden),
          ...style,
        };
  const parsed = (content.kind === 'text' ? qrQuerySchema : wifiQuerySchema).safeParse(query);
  if (!parsed.success) return { message: qrValidationError(parsed.error).message };
  const result = renderQr(parsed.data);
  return result.ok ? { svg: result.body } : { message: result.error.message };
}

function studio(content: Content, style: Look): { svg?: string; message?: string } {
  try {
    const request = requestOf(content, style);
    return { svg: previewSvg(encode(request), request) };
  } catch (error) {
    return { message: error instanceof Error ? error.message : String(error) };
  }
}

const CASES: [string, Content, Look][] = [
  ['a URL', { kind: 'text', data: 'https://example.com/console?from=browser&n=1' }, look()],
  ['digits and capitals', { kind: 'text', data: 'HELLO WORLD 0123456789' }, look({ scale: '3', margin: '0' })],
  ['accents and emoji', { kind: 'text', data: 'Smørrebrød ApS — 🍞' }, look({ dark: '#1a3c6e', light: '#fffaf0' })],
  ['a transparent background', { kind: 'text', data: 'x' }, look({ light: 'ffffff00' })],
  ['a long text', { kind: 'text', data: 'a'.repeat(213) }, look()],
  ['a wifi network', { kind: 'wifi', ssid: 'Café; "guests"', password: 'correct-horse', security: 'WPA', hidden: true }, look()],
  ['an open network', { kind: 'wifi', ssid: 'Open', password: 'ignored', security: 'nopass', hidden: false }, look()],
  ['too long', { kind: 'text', data: 'a'.repeat(214) }, look()],
  ['over 800 characters', { kind: 'text', data: '1'.repeat(801) }, look()],
  ['empty', { kind: 'text', data: '' }, look()],
  ['pale on white', { kind: 'text', data: 'x' }, look({ dark: '#eeeeee' })],
  ['inverted', { kind: 'text', data: 'x' }, look({ dark: '#ffffff', light: '#000000' })],
  ['the same colour', { kind: 'text', data: 'x' }, look({ dark: '#123', light: '#112233' })],
  ['a scale of 41', { kind: 'text', data: 'x' }, look({ scale: '41' })],
  ['a fractional margin', { kind: 'text', data: 'x' }, look({ margin: '1.5' })],
  ['a short WPA password', { kind: 'wifi', ssid: 'Home', password: 'short', security: 'WPA', hidden: false }, look()],
  ['no password', { kind: 'wifi', ssid: 'Home', password: '', security: 'WEP', hidden: false }, look()],
  ['a network name of 33 bytes', { kind: 'wifi', ssid: 'é'.repeat(17), password: 'correct-horse', security: 'WPA', hidden: false }, look()],
];

describe('QR studio preview', () => {
  it.each(CASES)('%s: the same SVG as the qr-worker, or the API’s message', (_, content, style) => {
    const expected = api(content, style);
    expect(studio(content, style)).toEqual(expected);
    if (expected.svg !== undefined && content.kind === 'text') expect(scanSvg(expected.svg)).toBe(content.data);
  });

  it('names files after the content', () => {
    expect(fileNameOf({ kind: 'text', data: 'https://www.example.com/menu?table=4' })).toBe('qr-example-com-menu-table-4');
    expect(fileNameOf({ kind: 'text', data: 'Smørrebrød ApS' })).toBe('qr-Smørrebrød-ApS');
    expect(fileNameOf({ kind: 'wifi', ssid: 'Café guests', password: '', security: 'nopass', hidden: false })).toBe('qr-wifi-Café-guests');
    expect(fileNameOf({ kind: 'text', data: '///' })).toBe('qr-code');
    expect(fileNameOf({ kind: 'text', data: 'x'.repeat(200) }).length).toBeLessThanOrEqual(63);
  });

  it('a print PNG has 1,200 px or more, a whole number per module', () => {
    for (const modules of [21 + 8, 25, 57 + 40, 1200, 1201]) {
      const side = printSide(modules);
      expect(side).toBeGreaterThanOrEqual(1200);
      expect(side % modules).toBe(0);
      expect(side - modules).toBeLessThan(1200);
    }
  });
});
