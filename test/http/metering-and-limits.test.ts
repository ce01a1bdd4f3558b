/**
 * Metering, free allowance, usage and rate limits against real gateways: per key and operation,
 * only 2xx metered, and in distributed mode one budget and one meter across two replicas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniquePrefix, dropPrefix, testRedisUrl } from '@svc/testkit';
import { generateApiKey } from '@svc/gateway';
import { call, startServer, type Mode, type TestServer } from '../support/servers.ts';

const QR = '/v1/qr/qr?data=hello';
const LIMITS = { FREE_ALLOWANCE_QR_GENERATE: '2', RATE_LIMIT_QR_GENERATE: '5', RATE_LIMIT_QR_WIFI: '0' };

interface Usage {
  period: string;
  operations: Record<string, { calls: number; billableCalls: number; freeRemaining: number; costUsd: string }>;
  totalCostUsd: string;
}

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(mode, { env: LIMITS });
  });
  afterAll(async () => server.close());

  it('meters successful calls: free inside the allowance, then the price; errors cost 0 and use none', async () => {
    const first = await call(server, QR, { key: server.key });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-service-cost')).toBe('0');
    expect(first.headers.get('x-service-free-remaining')).toBe('1');

    const rejected = await call(server, '/v1/qr/qr?data=hello&scale=99', { key: server.key });
    expect(rejected.status).toBe(400);
    expect(rejected.headers.get('x-service-cost')).toBe('0');
    expect(rejected.headers.get('x-service-free-remaining')).toBeNull();

    const second = await call(server, QR, { key: server.key });
    expect(second.headers.get('x-service-cost')).toBe('0');
    expect(second.headers.get('x-service-free-remaining')).toBe('0');

    const third = await call(server, QR, { key: server.key });
    expect(third.status).toBe(200);
    expect(third.headers.get('x-service-cost')).toBe('0.0005');
    expect(third.headers.get('x-service-free-remaining')).toBe('0');

    const usage = (await call(server, '/v1/usage', { key: server.key })).json() as Usage;
    expect(usage.period).toBe(new Date().toISOString().slice(0, 7));
    expect(usage.operations['qr.generate']).toMatchObject({
      calls: 3,
      billableCalls: 1,
      freeRemaining: 0,
      costUsd: '0.0005',
      priceUsd: '0.0005',
    });
    expect(usage.operations['email-verify.batch']).toMatchObject({
      calls: 0,
      billableCalls: 0,
      freeRemaining: 10,
      costUsd: '0',
      priceUsd: '0.15',
    });
    expect(Object.keys(usage.operations).sort()).toEqual([
      'email-verify.batch',
      'email-verify.list',
      'email-verify.single',
      'qr.generate',
      'qr.wifi',
    ]);
    expect(usage.totalCostUsd).toBe('0.0005');
  });

  it('rate limit headers on metered responses, then 429 with Retry-After in the error format', async () => {
    // This key's budget of 5 per window already holds the 4 calls of the test above.
    const fifth = await call(server, QR, { key: server.key });
    expect(fifth.status).toBe(200);
    expect(fifth.headers.get('ratelimit-limit')).toBe('5');
    expect(fifth.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(fifth.headers.get('ratelimit-reset'))).toBeGreaterThan(0);

    const limited = await call(server, QR, { key: server.key });
    expect(limited.status).toBe(429);
    expect((limited.json() as { error: string }).error).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('x-service-cost')).toBe('0');
    // Rejected calls are not metered.
    const usage = (await call(server, '/v1/usage', { key: server.key })).json() as Usage;
    expect(usage.operations['qr.generate']?.calls).toBe(4);
  });

  it('limits are per operation: another operation of the same key is unaffected, and 0 turns a limit off', async () => {
    const wifi = await call(server, '/v1/qr/wifi?ssid=home&password=secret123', { key: server.key });
    expect(wifi.status).toBe(200);
    expect(wifi.headers.get('ratelimit-limit')).toBeNull();
  });

  it('calls without a valid key are limited per client address', async () => {
    let status = 0;
    for (let i = 0; i < 6; i += 1) status = (await call(server, QR, { key: `sk_bad${i}` })).status;
    expect(status).toBe(429);
  });
});

describe('distributed mode: two gateway replicas', () => {
  const prefix = uniquePrefix('replicas');
  let one: TestServer;
  let two: TestServer;
  beforeAll(async () => {
    const key = generateApiKey();
    one = await startServer('distributed', { prefix, key, env: LIMITS });
    two = await startServer('distributed', { prefix, key, env: LIMITS, workers: false });
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    await dropPrefix(testRedisUrl(), prefix);
  });

  it('share one rate-limit budget and one meter', async () => {
    const answers = [];
    for (let i = 0; i < 6; i += 1) answers.push(await call(i % 2 === 0 ? one : two, QR, { key: one.key }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(answers.map((answer) => answer.headers.get('x-service-cost'))).toEqual(['0', '0', '0.0005', '0.0005', '0.0005', '0']);
    const usage = (await call(two, '/v1/usage', { key: one.key })).json() as Usage;
    expect(usage.operations['qr.generate']).toMatchObject({ calls: 5, billableCalls: 3, costUsd: '0.0015' });
  });

  it('concurrent calls on both replicas never both take the last free call', async () => {
    const key = generateApiKey();
    await one.keys.create('race', key);
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) => call(i % 2 === 0 ? one : two, '/v1/qr/wifi?ssid=x&security=nopass', { key })),
    );
    const costs = answers.map((answer) => answer.headers.get('x-service-cost')).sort();
    // Allowance of wifi is the default 1000 here; what matters is that each call saw its own count.
    const remaining = answers.map((answer) => Number(answer.headers.get('x-service-free-remaining'))).sort((a, b) => a - b);
    expect(costs).toEqual(['0', '0', '0', '0']);
    expect(remaining).toEqual([996, 997, 998, 999]);
  });
});
