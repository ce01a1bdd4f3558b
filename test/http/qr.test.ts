/**
 * The QR routes' HTTP contract in both modes: content types, SVG size, the JSON matrix, the
 * parameter errors docs/api.md names, and that what comes over HTTP scans (decoded with jsqr).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanSvg } from '@svc/testkit';
import { call, startServer, type Mode, type TestServer } from '../support/servers.ts';

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(mode);
  });
  afterAll(async () => server.close());
  const get = (path: string) => call(server, path, { key: server.key });

  it('GET /v1/qr/qr answers a scannable SVG of the documented size', async () => {
    const data = 'https://example.com/some/path?with=query&and=more';
    const response = await get(`/v1/qr/qr?data=${encodeURIComponent(data)}&scale=5&margin=3`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    expect(response.headers.get('x-service-cost')).toBe('0');
    const viewBox = /viewBox="0 0 (\d+) (\d+)"/.exec(response.text);
    const modules = Number(viewBox?.[1]);
    expect(response.text).toContain(`width="${modules * 5}"`);
    expect(response.text).toContain(`height="${modules * 5}"`);
    expect(scanSvg(response.text)).toBe(data);
  });

  it('format=json answers the module matrix without the quiet zone', async () => {
    const response = await get('/v1/qr/qr?data=hello&format=json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = response.json() as { version: number; ecc: string; size: number; margin: number; modules: number[][] };
    expect(body.ecc).toBe('M');
    expect(body.version).toBe(1);
    expect(body.size).toBe(21);
    expect(body.margin).toBe(4);
    expect(body.modules).toHaveLength(21);
    expect(body.modules.every((row) => row.length === 21 && row.every((cell) => cell === 0 || cell === 1))).toBe(true);
    // Finder pattern at the top-left corner: a dark 7x7 ring.
    expect(body.modules[0]!.slice(0, 7)).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });

  it('the wifi route encodes an escaped WIFI payload that scans', async () => {
    const response = await get(`/v1/qr/wifi?ssid=${encodeURIComponent('My;Net')}&password=${encodeURIComponent('pa:ss,word"1')}`);
    expect(response.status).toBe(200);
    expect(scanSvg(response.text)).toBe('WIFI:T:WPA;S:My\\;Net;P:pa\\:ss\\,word\\"1;H:false;;');
  });

  it.each([
    ['scale=0', 'scale'],
    ['scale=41', 'scale'],
    ['scale=2.5', 'scale'],
    ['margin=21', 'margin'],
    ['margin=-1', 'margin'],
    ['format=png', 'format'],
    ['dark=%23ggg', 'dark'],
    ['dark=red', 'dark'],
    ['light=%2312345', 'light'],
    ['dark=123&light=%23112233ff', 'light'],
    ['size=3', 'size'],
  ])('%s → 400 invalid_parameter naming %s', async (query, param) => {
    const response = await get(`/v1/qr/qr?data=x&${query}`);
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_parameter', details: { param } });
    expect(response.headers.get('x-service-cost')).toBe('0');
  });

  it('missing data → invalid_parameter; too much data → content_too_long', async () => {
    expect((await get('/v1/qr/qr')).json()).toMatchObject({ error: 'invalid_parameter', details: { param: 'data' } });
    expect((await get(`/v1/qr/qr?data=${'a'.repeat(801)}`)).json()).toMatchObject({ error: 'content_too_long' });
    expect((await get(`/v1/qr/qr?data=${'a'.repeat(214)}`)).json()).toMatchObject({ error: 'content_too_long' });
    expect((await get(`/v1/qr/qr?data=${'a'.repeat(213)}`)).status).toBe(200);
    expect((await get(`/v1/qr/qr?data=${'7'.repeat(513)}`)).status).toBe(200);
  });

  it('wifi parameter rules', async () => {
    expect((await get('/v1/qr/wifi?ssid=x')).json()).toMatchObject({ error: 'invalid_parameter', details: { param: 'password' } });
    expect((await get('/v1/qr/wifi?ssid=x&security=nopass&password=secret12')).json()).toMatchObject({
      error: 'invalid_parameter',
      details: { param: 'password' },
    });
    expect((await get('/v1/qr/wifi?ssid=x&password=short')).json()).toMatchObject({
      error: 'invalid_parameter',
      details: { param: 'password' },
    });
    expect((await get(`/v1/qr/wifi?ssid=${'s'.repeat(33)}&security=nopass`)).json()).toMatchObject({
      error: 'invalid_parameter',
      details: { param: 'ssid' },
    });
    expect((await get('/v1/qr/wifi?ssid=x&security=nopass')).status).toBe(200);
  });

  it.each(['WPA2', 'wpa2', 'Wpa2'])(
    'security=%s is accepted and written WPA, what readers use for every WPA generation',
    async (security) => {
      const response = await get(`/v1/qr/wifi?ssid=Home&password=correct-horse&security=${security}`);
      expect(response.status).toBe(200);
      expect(scanSvg(response.text)).toBe('WIFI:T:WPA;S:Home;P:correct-horse;H:false;;');
    },
  );

  it('an unknown security type is refused with the accepted ones, WPA2 among them', async () => {
    const response = await get('/v1/qr/wifi?ssid=Home&password=correct-horse&security=WPA4');
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({
      error: 'invalid_parameter',
      message: '`security` must be WPA (WPA2 is accepted as WPA), WEP or nopass.',
      details: { param: 'security' },
    });
  });
});
