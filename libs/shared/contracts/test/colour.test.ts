/**
 * The readability rule of QR colours: WCAG 2 contrast between the dark modules (composited over
 * the light colour) and the light colour (composited over white), dark the darker, at least 3:1.
 */
import { describe, expect, it } from 'vitest';
import { qrQuerySchema, qrValidationError } from '@svc/contracts';
import { MIN_CONTRAST_RATIO, contrastOf, normaliseColour } from '../src/qr/colour.ts';

const norm = (value: string) => normaliseColour(value)!;

describe('contrastOf', () => {
  it('black on white is 21:1, the WCAG maximum; equal colours 1:1', () => {
    expect(contrastOf(norm('000'), norm('fff'))).toEqual({ ratio: 21, darkIsDarker: true });
    expect(contrastOf(norm('777'), norm('777')).ratio).toBe(1);
  });

  it('composites the light colour over white and the dark one over the light result', () => {
    // A transparent background is white paper; an invisible dark colour is no contrast at all.
    expect(contrastOf(norm('000'), norm('ffffff00')).ratio).toBe(21);
    expect(contrastOf(norm('00000000'), norm('fff')).ratio).toBe(1);
    // Half-transparent black over white is sRGB grey 127, of luminance 0.212: (1 + 0.05) / (0.212 + 0.05) = 4.0.
    expect(contrastOf(norm('00000080'), norm('fff')).ratio).toBeCloseTo(4.0, 1);
  });

  it('knows which side is darker', () => {
    expect(contrastOf(norm('fff'), norm('000'))).toEqual({ ratio: 21, darkIsDarker: false });
  });

  it('the threshold falls between greys 94 and 95 on white', () => {
    expect(contrastOf(norm('949494'), norm('fff')).ratio).toBeGreaterThanOrEqual(MIN_CONTRAST_RATIO);
    expect(contrastOf(norm('959595'), norm('fff')).ratio).toBeLessThan(MIN_CONTRAST_RATIO);
  });
});

describe('the QR schemas refuse unreadable pairs on `dark`, with the ratio found and the minimum', () => {
  const errorOf = (query: Record<string, string>) => {
    const parsed = qrQuerySchema.safeParse({ data: 'x', ...query });
    if (parsed.success) return undefined;
    return qrValidationError(parsed.error);
  };

  it.each([
    ['invisible dark', { dark: '00000000' }, '1.00:1'],
    ['inverted', { dark: 'fff', light: '000' }, '21.00:1'],
    ['pale on white', { dark: 'cccccc' }, '1.60:1'],
    ['just under the threshold', { dark: '959595' }, '2.99:1'],
    ['dark on a dark background', { dark: '000', light: '333' }, '1.66:1'],
  ])('%s', (_label, query, found) => {
    const error = errorOf(query);
    expect(error?.code).toBe('invalid_parameter');
    expect(error?.details).toEqual({ param: 'dark' });
    expect(error?.message).toContain(found);
    expect(error?.message).toContain('3:1');
    expect(error?.message).toMatch(/^`dark` must /);
  });

  it.each<Record<string, string>>([
    { dark: '000', light: 'ffffff00' },
    { dark: '949494' },
    { dark: '1a237e', light: 'fff8e1' },
    { dark: '000000cc' },
  ])('accepts %o', (query) => expect(errorOf(query)).toBeUndefined());

  it('identical colours are still named on `light`, in a sentence for people', () => {
    const error = errorOf({ dark: '123', light: '#112233ff' });
    expect(error?.details).toEqual({ param: 'light' });
    expect(error?.message).toBe('`light` must differ from `dark`, or the code cannot be read.');
  });
});
