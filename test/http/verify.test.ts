/**
 * The verify routes end to end in both modes: gateway, transport and the real verify worker,
 * probing the scripted loopback mail world (DNS + SMTP servers on 127.0.0.x).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailRig, type MailRig } from '@svc/testkit';
import { call, startServer, type Mode, type TestServer, postBatch } from '../support/servers.ts';

let rig: MailRig;
beforeAll(async () => {
  rig = await startMailRig('shop.test', '127.0.0.21', ['ann@shop.test']);
});
afterAll(async () => rig?.close());

describe.each<Mode>(['embedded', 'distributed'])('%s mode', (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(mode, {
      env: { ...rig.env, VERIFY_BATCH_DEADLINE_MS: '5000', VERIFY_RESULT_CACHE_TTL_S: '0' },
    });
  });
  afterAll(async () => server?.close());

  it('batch: one result per entry in order, summary adding up to count, cost and allowance headers', async () => {
    const emails = ['ann@shop.test', 'nobody@shop.test', 'ann@shop.test', 'ann@gmial.com', 'broken'];
    const response = await postBatch(server, server.key, emails);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-service-cost')).toBe('0');
    expect(response.headers.get('x-service-free-remaining')).toBe('9');
    const body = response.json() as {
      count: number;
      results: Array<{ email: string; verdict: string; reason: string; didYouMean?: string }>;
      summary: Record<string, number>;
    };
    expect(body.count).toBe(5);
    expect(body.results.map((result) => result.email)).toEqual(emails);
    expect(body.results.map((result) => result.verdict)).toEqual([
      'deliverable',
      'undeliverable',
      'deliverable',
      'undeliverable',
      'undeliverable',
    ]);
    expect(body.results[3]).toMatchObject({ reason: 'invalid_domain', didYouMean: 'ann@gmail.com' });
    expect(body.summary).toEqual({ deliverable: 2, risky: 0, undeliverable: 3 });
  });

  it('single: one result object', async () => {
    const response = await call(server, '/v1/email-verify/verify?email=ann%40shop.test', { key: server.key });
    expect(response.status).toBe(200);
    expect(response.json()).toMatchObject({
      email: 'ann@shop.test',
      verdict: 'deliverable',
      reason: 'accepted_email',
      checks: { smtp: 'accepted', catchAll: false },
    });
    expect(response.headers.get('x-service-free-remaining')).toBe('99');
  });

  it('single: a missing or unknown parameter is invalid_parameter', async () => {
    expect((await call(server, '/v1/email-verify/verify', { key: server.key })).json()).toMatchObject({
      error: 'invalid_parameter',
      details: { param: 'email' },
    });
    expect((await call(server, '/v1/email-verify/verify?email=a@b.co&x=1', { key: server.key })).json()).toMatchObject({
      error: 'invalid_parameter',
      details: { param: 'x' },
    });
  });
});
