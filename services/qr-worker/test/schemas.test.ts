/** The QR query rules of docs/api.md ("QR codes"), and their errors, at the schema level. */
import { describe, expect, it } from 'vitest';
import type { ApiError } from '@svc/contracts';
import { normaliseColour, qrQuerySchema, qrToolInputSchema, qrValidationError, wifiQuerySchema, wifiToolInputSchema } from '@svc/contracts';

function errorOf(schema: { safeParse: (value: unknown) => { success: boolean; error?: unknown } }, input: unknown): ApiError {
  const parsed = schema.safeParse(input);
  if (parsed.success) throw new Error(`accepted ${JSON.stringify(input)}`);
  return qrValidationError(parsed.error as Parameters<typeof qrValidationError>[0]);
}

describe('colours', () => {
  it.each([
    ['000', '#000000ff'],
    ['#ABC', '#aabbccff'],
    ['abcd', '#aabbccdd'],
    ['#A1B2C3', '#a1b2c3ff'],
    ['a1b2c3d4', '#a1b2c3d4'],
  ])('%s → %s', (input, output) => expect(normaliseColour(input)).toBe(output));

  it.each(['', '#', '12', '12345', '#1234567', 'ggg', 'red', '#000"/><script>', ' #000', '#000 '])('rejects %j', (input) => {
    expect(normaliseColour(input)).toBeUndefined();
    expect(errorOf(qrQuerySchema, { data: 'x', dark: input }).details).toEqual({ param: 'dark' });
  });

  it('identical colours once normalised are invalid, on light', () => {
    const error = errorOf(qrQuerySchema, { data: 'x', dark: '123', light: '#112233ff' });
    expect(error.code).toBe('invalid_parameter');
    expect(error.details).toEqual({ param: 'light' });
  });
});

describe('QR query', () => {
  it('applies the defaults', () => {
    expect(qrQuerySchema.parse({ data: 'x' })).toEqual({
      data: 'x',
      format: 'svg',
      scale: 8,
      margin: 4,
      dark: '#000000ff',
      light: '#ffffffff',
    });
  });

  it.each([
    [{ data: 'x', scale: '0' }, 'scale'],
    [{ data: 'x', scale: '41' }, 'scale'],
    [{ data: 'x', scale: '1.5' }, 'scale'],
    [{ data: 'x', scale: '' }, 'scale'],
    [{ data: 'x', scale: ['1', '2'] }, 'scale'],
    [{ data: 'x', margin: '21' }, 'margin'],
    [{ data: 'x', format: 'PNG' }, 'format'],
    [{ data: '' }, 'data'],
    [{}, 'data'],
    [{ data: 'x', colour: 'red' }, 'colour'],
  ])('%j → invalid_parameter on %s', (input, param) => {
    const error = errorOf(qrQuerySchema, input);
    expect(error.code).toBe('invalid_parameter');
    expect(error.details).toEqual({ param });
    expect(error.message).toContain(param);
  });

  it('data over 800 code points is content_too_long; 800 emoji pass the length rule', () => {
    expect(errorOf(qrQuerySchema, { data: 'a'.repeat(801) }).code).toBe('content_too_long');
    expect(qrQuerySchema.safeParse({ data: '🚀'.repeat(800) }).success).toBe(true);
  });
});

describe('wifi query', () => {
  const ok = (input: Record<string, string>) => wifiQuerySchema.parse(input).data;

  it('builds the WIFI payload, security case-insensitive, hidden flag', () => {
    expect(ok({ ssid: 'Home', password: 'correct-horse' })).toBe('WIFI:T:WPA;S:Home;P:correct-horse;H:false;;');
    expect(ok({ ssid: 'Home', password: 'abcde', security: 'wep', hidden: 'true' })).toBe('WIFI:T:WEP;S:Home;P:abcde;H:true;;');
    expect(ok({ ssid: 'Cafe', security: 'NOPASS' })).toBe('WIFI:T:nopass;S:Cafe;P:;H:false;;');
  });

  it.each([
    [{ ssid: 'x' }, 'password'],
    [{ ssid: 'x', password: 'short' }, 'password'],
    [{ ssid: 'x', password: 'p'.repeat(64) }, 'password'],
    [{ ssid: 'x', password: 'abcd', security: 'WEP' }, 'password'],
    [{ ssid: 'x', password: 'secret12', security: 'nopass' }, 'password'],
    [{ ssid: '', security: 'nopass' }, 'ssid'],
    [{ ssid: 'é'.repeat(17), security: 'nopass' }, 'ssid'],
    [{ ssid: 'x', security: 'WPA3', password: 'secret12' }, 'security'],
    [{ ssid: 'x', security: 'nopass', hidden: 'yes' }, 'hidden'],
  ])('%j → invalid_parameter on %s', (input, param) => {
    expect(errorOf(wifiQuerySchema, input).details).toEqual({ param });
  });

  it('accepts 64 hex digits for WPA and 10/26 hex digits for WEP', () => {
    expect(ok({ ssid: 'x', password: 'a'.repeat(64) })).toContain('P:aaaa');
    expect(ok({ ssid: 'x', password: '0123456789', security: 'WEP' })).toContain('P:0123456789');
    expect(ok({ ssid: 'x', password: 'abcdef0123456789abcdef0123', security: 'WEP' })).toContain('T:WEP');
  });
});

describe('tool arguments are JSON-typed with the same rules', () => {
  it('takes integers and booleans, renders SVG', () => {
    expect(qrToolInputSchema.parse({ data: 'x', scale: 3 })).toMatchObject({ format: 'svg', scale: 3, margin: 4 });
    expect(wifiToolInputSchema.parse({ ssid: 'x', security: 'nopass', hidden: true }).data).toBe('WIFI:T:nopass;S:x;P:;H:true;;');
    expect(errorOf(qrToolInputSchema, { data: 'x', scale: '3' }).details).toEqual({ param: 'scale' });
    expect(errorOf(qrToolInputSchema, { data: 'x', format: 'json' }).details).toEqual({ param: 'format' });
  });
});
