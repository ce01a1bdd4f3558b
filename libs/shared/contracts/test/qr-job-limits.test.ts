/**
 * The QR job's payload schema reads the request parameters' own limits: whatever a route or a
 * tool accepts at its limits, a worker accepts off Redis, and what they refuse it refuses too.
 * Before, the job schema held its own copy of the limits (and none on `data`), so raising one
 * broke only the distributed mode.
 */
import { describe, expect, it } from 'vitest';
import { MARGIN, MAX_DATA_CODE_POINTS, QR_JOB, SCALE, qrQuerySchema, qrToolInputSchema, wifiQuerySchema } from '@svc/contracts';

const [minScale, maxScale] = SCALE;
const [minMargin, maxMargin] = MARGIN;
/** At the limit in code points, beyond it in UTF-16 units: the count is of characters. */
const longest = '😀'.repeat(MAX_DATA_CODE_POINTS);

describe('the QR job payload and the request parameters share their limits', () => {
  it.each([
    ['highest', maxScale, maxMargin],
    ['lowest', minScale, minMargin],
  ])('a query at the %s scale and margin makes a payload the job accepts', (_, scale, margin) => {
    const payload = qrQuerySchema.parse({ data: longest, scale: String(scale), margin: String(margin) });
    expect(QR_JOB.payload.parse(payload)).toEqual(payload);
  });

  it('a tool call and a Wi-Fi query at the limits make payloads the job accepts', () => {
    const tool = qrToolInputSchema.parse({ data: longest, scale: maxScale, margin: maxMargin });
    expect(QR_JOB.payload.parse(tool)).toEqual(tool);
    const wifi = wifiQuerySchema.parse({ ssid: 'x'.repeat(32), password: 'p'.repeat(63), scale: String(maxScale), margin: '0' });
    expect(QR_JOB.payload.parse(wifi)).toEqual(wifi);
  });

  it.each([
    ['scale', { scale: maxScale + 1 }],
    ['scale', { scale: minScale - 1 }],
    ['margin', { margin: maxMargin + 1 }],
    ['margin', { margin: minMargin - 1 }],
    ['data', { data: `${longest}a` }],
    ['data', { data: '' }],
  ])('one step past a limit of %s is refused by the request and by the job alike', (_, change) => {
    const atLimits = { data: longest, format: 'svg', scale: maxScale, margin: maxMargin, dark: '#000000ff', light: '#ffffffff' };
    const beyond = { ...atLimits, ...change };
    expect(QR_JOB.payload.safeParse(atLimits).success).toBe(true);
    expect(QR_JOB.payload.safeParse(beyond).success).toBe(false);
    const query = Object.fromEntries(Object.entries(beyond).map(([key, value]) => [key, String(value)]));
    expect(qrQuerySchema.safeParse(query).success).toBe(false);
  });
});
