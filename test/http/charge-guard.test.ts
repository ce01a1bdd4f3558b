/**
 * The guard of test/support/charge-guard.ts, which every test calling a gateway through `call()`
 * runs: it must fail a metered 2xx that was never charged, and a charge the meter never recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectChargesRecorded, forgetServer, noteAnswer, perCallOperation } from '../support/charge-guard.ts';
import { call, startServer, type TestServer } from '../support/servers.ts';

const charged = new Headers({ 'x-service-cost': '0', 'x-service-free-remaining': '3' });
const uncharged = new Headers({ 'x-service-cost': '0' });

describe('a metered answer never charged', () => {
  it('fails the call when it is a 2xx of an operation billed per call', () => {
    expect(() => noteAnswer('http://guard.test', 'GET', '/v1/qr/qr?data=x', 'k', 200, uncharged)).toThrow(/never charged/);
    expect(() => noteAnswer('http://guard.test', 'POST', '/v1/email-verify/verify/batch', 'k', 200, uncharged)).toThrow(/never charged/);
  });

  it('passes a charged 2xx, any refusal, and routes not billed per call', () => {
    expect(() => noteAnswer('http://guard.test', 'GET', '/v1/qr/wifi?ssid=x', 'k', 200, charged)).not.toThrow();
    expect(() => noteAnswer('http://guard.test', 'GET', '/v1/qr/qr', 'k', 400, uncharged)).not.toThrow();
    expect(() => noteAnswer('http://guard.test', 'GET', '/v1/usage', 'k', 200, uncharged)).not.toThrow();
    expect(perCallOperation('POST', '/v1/email-verify/lists')).toBeUndefined();
    expect(perCallOperation('get', '/v1/email-verify/verify?email=a@b.test')).toBe('email-verify.single');
  });
});

describe('a charge the meter never recorded', () => {
  let server: TestServer;
  beforeAll(async () => void (server = await startServer('embedded')));
  // Its close runs the guard too, which would fail on the phantom answer below: checked here, then forgotten.
  afterAll(async () => {
    forgetServer(server.baseUrl);
    await server.close();
  });

  it('fails when the server closes; the meter holding every charged call passes', async () => {
    expect((await call(server, '/v1/qr/qr?data=guard', { key: server.key })).status).toBe(200);
    await expect(expectChargesRecorded(server.baseUrl)).resolves.toBeUndefined();
    expect((await call(server, '/v1/qr/qr?data=guard-2', { key: server.key })).status).toBe(200);
    // One more answer than the meter holds: what a route answering 200 without a record looks like.
    noteAnswer(server.baseUrl, 'GET', '/v1/qr/qr?data=phantom', server.key, 200, charged);
    await expect(expectChargesRecorded(server.baseUrl)).rejects.toThrow(
      '3 answers of qr.generate were 2xx and charged, but the meter recorded 2',
    );
  });
});
