/**
 * A distributed gateway whose verify jobs no worker takes (only a qr-worker runs): a verify call
 * is answered 504 at its deadline, saying that no verify worker took the job, not the generic
 * deadline message; QR calls, which a worker takes, are answered as usual.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qrJobHandler } from '@svc/qr-worker';
import { call, startServer, type TestServer } from '../support/servers.ts';

describe('a verify call with no verify-worker running', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer('distributed', { env: { REQUEST_DEADLINE_MS: '700' }, handlers: [qrJobHandler] });
  });
  afterAll(() => server.close());

  it('is 504 at its deadline, saying no verify worker took it', async () => {
    const started = Date.now();
    const response = await call(server, '/v1/email-verify/verify?email=ann%40shop.test', { key: server.key });
    expect(response.status).toBe(504);
    expect(response.json()).toMatchObject({
      error: 'timeout',
      message: 'No verify worker took this job before the request deadline: none is running, or all were busy.',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(650);
    expect(Date.now() - started).toBeLessThan(2_700);
  });

  it('while QR calls, which a worker takes, are answered', async () => {
    const response = await call(server, '/v1/qr/qr?data=hello', { key: server.key });
    expect(response.status).toBe(200);
  });
});
