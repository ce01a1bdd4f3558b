/** /metrics: the contract's request histogram, operation counters, and bounded label values. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../support/servers.ts';

describe('Prometheus metrics', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer('embedded', { env: { FREE_ALLOWANCE_QR_GENERATE: '0' } });
    await call(server, '/v1/qr/qr?data=a', { key: server.key });
    await call(server, '/v1/qr/qr?data=a&scale=0', { key: server.key });
    await call(server, '/v1/qr/qr?data=a');
    await call(server, `/no/such/${'x'.repeat(20)}`);
  });
  afterAll(async () => server.close());

  it('exposes request latency by method, route pattern and status, and calls and cost by operation', async () => {
    const response = await call({ baseUrl: server.metricsUrl }, '/metrics');
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = response.text;
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0.005",[^}]*method="GET",route="\/v1\/qr\/qr",status_code="200"/);
    expect(text).toMatch(/api_calls_total\{[^}]*operation="qr.generate",outcome="success"[^}]*\} 1/);
    expect(text).toMatch(/api_calls_total\{[^}]*operation="qr.generate",outcome="client_error"[^}]*\} 1/);
    expect(text).toMatch(/api_calls_total\{[^}]*operation="qr.generate",outcome="unauthorized"[^}]*\} 1/);
    expect(text).toMatch(/api_cost_usd_total\{[^}]*operation="qr.generate"[^}]*\} 0.0005/);
    expect(text).toMatch(/job_wait_seconds_count\{[^}]*queue="qr",outcome="completed"/);
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('never labels with a raw path, a key or query data', async () => {
    const text = (await call({ baseUrl: server.metricsUrl }, '/metrics')).text;
    expect(text).toContain('route="unmatched"');
    expect(text).not.toContain('/no/such');
    expect(text).not.toContain(server.key);
    expect(text).not.toContain('data=a');
  });
});
