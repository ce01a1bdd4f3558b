/**
 * JSON bombs at a real gateway process (decisions, "Fair share and hostile input"): a 16 MiB list
 * body of nested arrays, of empty objects or of numbers is refused `400 invalid_request` while the
 * process grows by less than 256 MiB and `/healthz` answers within 2 s; nesting deeper than 8 levels
 * is refused on every JSON route (REST, lists, tool servers). Each case prints its figures.
 */
import { LIST_BODY_LIMIT_BYTES } from '@svc/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshRequest, healthzWhile, startGatewayProcess, type GatewayProcess } from './gateway-process.ts';

const LISTS = '/v1/email-verify/lists';
const MIB = 1024 * 1024;

/** `{"emails":` + filler + `}` of exactly `size` bytes, the filler made of `open` n times and `close`. */
function bomb(size: number, unit: string, head = '{"emails":[', tail = ']}'): string {
  const count = Math.floor((size - head.length - tail.length) / (unit.length + 1));
  // repeat, not an array joined: 8 million elements took 2.4 s of the run's CPU.
  return head + `${unit},`.repeat(count - 1) + unit + tail;
}

function nested(size: number): string {
  const head = '{"emails":';
  const depth = Math.floor((size - head.length - 1) / 2);
  return head + '['.repeat(depth) + ']'.repeat(depth) + '}';
}

/** Each bomb and its refusal: a list of strings is too long a list; anything else is no list at all. */
const BOMBS: Array<[string, () => string, string]> = [
  ['nested arrays', () => nested(LIST_BODY_LIMIT_BYTES), 'invalid_request'],
  ['empty objects', () => bomb(LIST_BODY_LIMIT_BYTES, '{}'), 'invalid_request'],
  ['empty arrays', () => bomb(LIST_BODY_LIMIT_BYTES, '[]'), 'invalid_request'],
  ['numbers', () => bomb(LIST_BODY_LIMIT_BYTES, '1'), 'invalid_request'],
  ['short strings', () => bomb(LIST_BODY_LIMIT_BYTES, '"ab"'), 'too_many_emails'],
];

describe('JSON bombs against a real gateway process', () => {
  let gateway: GatewayProcess;
  beforeAll(async () => {
    gateway = await startGatewayProcess();
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  const post = (path: string, body: string, extra: Record<string, string> = {}) =>
    fetch(`${gateway.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json', ...extra },
      body,
    });

  it.each(BOMBS)('16 MiB of %s: 400, bounded memory, /healthz on time', { timeout: 60_000 }, async (label, make, code) => {
    const body = make();
    expect(body.length).toBeGreaterThan(LIST_BODY_LIMIT_BYTES - 16);
    expect(body.length).toBeLessThanOrEqual(LIST_BODY_LIMIT_BYTES);
    const before = gateway.rssKiB();
    gateway.resetPeak();
    const { result, slowestMs, failures } = await healthzWhile(gateway.baseUrl, async () => {
      const response = await freshRequest(`${gateway.baseUrl}${LISTS}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json' },
        body,
      });
      return { status: response.status, body: JSON.parse(response.body) as { error?: string } };
    });
    const grewMiB = (gateway.peakKiB() - before) / 1024;
    console.log(`${label}: status ${result.status}, peak +${grewMiB.toFixed(0)} MiB, slowest /healthz ${slowestMs.toFixed(0)} ms`);
    expect(result.status).toBe(400);
    expect(result.body.error).toBe(code);
    expect(grewMiB).toBeLessThan(256);
    expect(slowestMs).toBeLessThan(2_000);
    expect(failures).toBe(0);
    expect(gateway.service.child.exitCode).toBeNull();
  });

  it('nesting deeper than 8 levels is refused on the batch route, lists and the tool servers', async () => {
    const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    const batch = await post('/v1/email-verify/verify/batch', `{"emails":${deep(8)}}`);
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as { error: string; message: string }).message).toMatch(/nest/i);
    const list = await post(LISTS, `{"emails":["a@example.com"],"name":${deep(9)}}`);
    expect(list.status).toBe(400);
    expect(((await list.json()) as { error: string }).error).toBe('invalid_request');
    const tool = await post('/api/mcp/email-verify', `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":${deep(8)}}}`, {
      accept: 'application/json, text/event-stream',
    });
    expect(tool.status).toBe(400);
    expect(((await tool.json()) as { error: string }).error).toBe('invalid_request');
  });

  it(
    'bodies within the bounds still work: 8 levels, a list of 100,000 addresses, more is too_many_emails',
    { timeout: 60_000 },
    async () => {
      // 8 levels is the limit: a body 8 deep is parsed (and refused by its schema, not its depth).
      const eight = await post('/v1/email-verify/verify/batch', `{"emails":["a@example.com"],"x":${'['.repeat(7)}${']'.repeat(7)}}`);
      expect(eight.status).toBe(400);
      expect(((await eight.json()) as { message: string }).message).not.toMatch(/nest/i);
      const addresses = (n: number) => JSON.stringify({ emails: Array.from({ length: n }, (_, i) => `user${i}@example.com`) });
      const over = await post(LISTS, addresses(100_001));
      expect(over.status).toBe(400);
      expect(((await over.json()) as { error: string }).error).toBe('too_many_emails');
      const many = await post(LISTS, bomb(MIB * 15, '"x@example.com"'));
      expect(many.status).toBe(400);
      expect(((await many.json()) as { error: string }).error).toBe('too_many_emails');
    },
  );
});
