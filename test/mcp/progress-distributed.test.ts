/**
 * Progress in distributed mode, with the product as its real processes: a gateway and a
 * verify-worker (`node` on their main.ts) over the test Redis. A client that gives a
 * progressToken receives `notifications/progress` while the worker probes: the worker reports
 * over Redis (job protocol v2, progress messages), the gateway forwards them to the call's
 * stream. Both eras, with the real SDK clients.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailRig, type MailRig } from '@svc/testkit';
import { startDistributedProduct, type Product } from '../lists/products.ts';
import { connectAs, type ClientKind } from './eras.ts';

const USERS = ['ada@progress-d.test', 'bob@progress-d.test', 'cy@progress-d.test', 'dee@progress-d.test'];
const EMAILS = [...USERS, 'nobody@progress-d.test', 'gone@progress-d.test', 'not an address', 'ADA@progress-d.test'];
/** Banner and each reply 200 ms late, one RCPT at a time: the batch's session takes a couple of seconds. */
const SLOW = { bannerDelayMs: 200, replyDelayMs: 200, pipelining: false } as const;

let rig: MailRig;
let product: Product;
beforeAll(async () => {
  rig = await startMailRig('progress-d.test', '127.0.0.34', USERS);
  Object.assign(rig.smtp.script, SLOW);
  product = await startDistributedProduct({ ...rig.env, VERIFY_RESULT_CACHE_TTL_S: '0', RATE_LIMIT_EMAIL_VERIFY_BATCH: '0' });
}, 60_000);
afterAll(async () => {
  await product?.close();
  await rig?.close();
});

describe.each<ClientKind>(['v2 pinned 2026-07-28', 'v1'])('%s client, gateway and verify-worker as processes', (kind) => {
  it('receives growing progress notifications from the worker while the batch runs, then the result', async () => {
    const client = await connectAs(kind, product, 'email-verify');
    const updates: Array<{ progress: number; total?: number; at: number }> = [];
    const started = Date.now();
    let answeredAt = 0;
    try {
      const result = await client.callTool('email-verify_verify-batch', { emails: EMAILS }, (update) =>
        updates.push({ ...update, at: Date.now() }),
      );
      answeredAt = Date.now();
      expect(result.isError, product.output()).toBeFalsy();
      expect((result.structuredContent as { count: number }).count).toBe(EMAILS.length);
    } finally {
      await client.close();
    }
    // The session is slow: the answer takes over a second, and progress came while it ran, not with it.
    expect(answeredAt - started).toBeGreaterThan(1_000);
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(answeredAt - updates[0]!.at).toBeGreaterThan(500);
    const total = updates[0]?.total ?? 0;
    // Distinct addresses: `ADA@` is `ada@`; the one that is no address may be settled before the job.
    expect(total).toBeGreaterThanOrEqual(6);
    expect(total).toBeLessThanOrEqual(7);
    for (const update of updates) expect(update.total).toBe(total);
    const values = updates.map((update) => update.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    expect(values.at(-1)).toBe(total);
  }, 30_000);
});
