/**
 * Distributed mode when parts fail: Redis unreachable answers 503 fast with Retry-After (and
 * readiness fails), a job whose worker is gone answers 504 at the deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@svc/config';
import { dropPrefix, startTcpProxy, testRedisUrl, uniquePrefix, type TcpProxy } from '@svc/testkit';
import { generateApiKey } from '@svc/gateway';
import { buildDistributedGateway, type DistributedGateway } from '@svc/gateway/distributed';
import { call, startServer, type TestServer } from '../support/servers.ts';

describe('no worker running', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer('distributed', { workers: false, env: { REQUEST_DEADLINE_MS: '800' } });
  });
  afterAll(async () => server.close());

  it('answers 504 timeout at the request deadline, and costs nothing', async () => {
    const started = Date.now();
    const response = await call(server, '/v1/qr/qr?data=hello', { key: server.key });
    expect(response.status).toBe(504);
    expect((response.json() as { error: string }).error).toBe('timeout');
    expect(response.headers.get('x-service-cost')).toBe('0');
    expect(Date.now() - started).toBeGreaterThanOrEqual(750);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('Redis unreachable', () => {
  const prefix = uniquePrefix('redis-down');
  let proxy: TcpProxy;
  let built: DistributedGateway;
  let baseUrl: string;
  const key = generateApiKey();
  beforeAll(async () => {
    proxy = await startTcpProxy(testRedisUrl());
    built = await buildDistributedGateway(loadConfig({ REDIS_URL: proxy.url, REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' }));
    await built.keys.create('k', key);
    baseUrl = await built.gateway.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    proxy.restore();
    await built.gateway.app.close();
    for (const close of built.closers) await close();
    await proxy.close();
    await dropPrefix(testRedisUrl(), prefix);
  });

  it('a call answers 503 service_unavailable with Retry-After within a second; readiness fails', async () => {
    expect((await call({ baseUrl }, '/readyz')).status).toBe(200);
    proxy.cut();
    // Readiness fails once the gateway has seen Redis go; from then on a call must not wait for it.
    await expect.poll(async () => (await call({ baseUrl }, '/readyz')).status, { timeout: 5_000, interval: 50 }).toBe(503);
    const started = Date.now();
    const response = await call({ baseUrl }, '/v1/qr/qr?data=hello', { key });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(response.status).toBe(503);
    expect((response.json() as { error: string }).error).toBe('service_unavailable');
    expect(response.headers.get('retry-after')).toBe('5');
    const ready = await call({ baseUrl }, '/readyz');
    expect(ready.status).toBe(503);
    expect((await call({ baseUrl }, '/healthz')).status).toBe(200);
  });
});
