/**
 * List callbacks end to end, in both modes, with the product as real processes and a real HTTP
 * receiver on loopback (LIST_ALLOW_PRIVATE_CALLBACKS=true): a list created with a `callbackUrl`
 * ends and the receiver gets one signed `list.completed` POST, whose X-Signature checks with
 * `verifySignature` under the secret the product signs with (embedded: LIST_WEBHOOK_SECRET;
 * distributed: the key's webhook secret as the key tool printed it) and whose body is the list
 * object; a cancelled list sends `list.cancelled`.
 */
import { verifySignature } from '@svc/webhooks';
import { generateWebhookSecret } from '@svc/webhooks/secrets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type ReceivedRequest, type Receiver } from '../../libs/shared/webhooks/test/support/receiver.ts';
import { startMultiRig, type ListObjectBody, type MultiRig } from './harness.ts';
import { startDistributedProduct, startEmbeddedProduct, type Product } from './products.ts';

let rig: MultiRig;
let receiver: Receiver;
beforeAll(async () => {
  rig = await startMultiRig({
    'hooks.test': { host: '127.0.0.81', users: ['ann@hooks.test', 'bob@hooks.test'] },
    // Never answers RCPT: a list of its addresses runs until it is cancelled.
    'stuck.test': { host: '127.0.0.82', users: [], tarpit: { at: 'rcpt' } },
  });
  receiver = await startReceiver(() => ({ status: 204 }));
});
afterAll(async () => {
  await receiver?.close();
  await rig?.close();
});

const ENV = () => ({ ...rig.env, LIST_ALLOW_PRIVATE_CALLBACKS: 'true', LIST_RETRY_DELAYS_S: '' });
const STARTERS = { embedded: startEmbeddedProduct, distributed: startDistributedProduct };

const callbacksOf = (id: string): ReceivedRequest[] =>
  receiver.requests.filter((request) => (JSON.parse(request.body) as { id?: string }).id === id);

describe.each(['embedded', 'distributed'] as const)('%s mode', (mode) => {
  let product: Product;
  beforeAll(async () => {
    product = await STARTERS[mode](ENV());
  });
  afterAll(async () => product?.close());

  const api = async (method: string, path: string, body?: unknown): Promise<ListObjectBody> => {
    const response = await fetch(`${product.baseUrl}/v1/email-verify/lists${path}`, {
      method,
      headers: { authorization: `Bearer ${product.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.ok, `${method} ${path}: ${response.status} ${text}\n${product.output()}`).toBe(true);
    return JSON.parse(text) as ListObjectBody;
  };

  function expectSigned(request: ReceivedRequest): void {
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toMatch(/^application\/json/);
    expect(request.headers['x-event-id']).toMatch(/^evt_/);
    const signature = request.headers['x-signature'];
    expect(typeof signature).toBe('string');
    expect(verifySignature(String(signature), request.body, product.webhookSecret)).toMatchObject({ ok: true });
    // The check can fail: another secret does not verify it, nor does an altered body.
    expect(verifySignature(String(signature), request.body, generateWebhookSecret())).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySignature(String(signature), request.body.replace('"list.', '"lists.'), product.webhookSecret)).toMatchObject({
      ok: false,
    });
  }

  it('a list that ends POSTs list.completed to its callbackUrl once, signed, with X-Event-Id; the body is the list', async () => {
    const callbackUrl = `${receiver.origin}/hooks/lists?token=receiver-own`;
    const created = await api('POST', '', {
      emails: ['ann@hooks.test', 'carol@hooks.test', 'bob@hooks.test'],
      name: 'signed',
      callbackUrl,
    });
    await expect.poll(() => callbacksOf(created.id).length, { timeout: 30_000 }).toBe(1);
    const list = await api('GET', `/${created.id}`);
    expect(list.status).toBe('completed');

    const [request] = callbacksOf(created.id);
    expectSigned(request!);
    expect(request!.url).toBe('/hooks/lists?token=receiver-own');
    expect(JSON.parse(request!.body)).toEqual({ ...list, event: 'list.completed' });
    expect(list.summary).toEqual({ deliverable: 2, risky: 0, undeliverable: 1 });

    // Answered 204: never sent again, by the time a list created after it has had its own callback
    // (handed over after this one's, by the same dispatcher).
    const later = await api('POST', '', { emails: ['ann@hooks.test'], callbackUrl: `${receiver.origin}/hooks/later` });
    await expect.poll(() => callbacksOf(later.id).length, { timeout: 30_000 }).toBeGreaterThan(0);
    expect(callbacksOf(created.id)).toHaveLength(1);
  }, 60_000);

  it('a cancelled list POSTs list.cancelled', async () => {
    const callbackUrl = `${receiver.origin}/hooks/cancelled`;
    const created = await api('POST', '', { emails: ['x@stuck.test', 'y@stuck.test'], callbackUrl });
    await expect.poll(async () => (await api('GET', `/${created.id}`)).status, { timeout: 20_000 }).toBe('running');
    const cancelled = await api('DELETE', `/${created.id}`);
    expect(cancelled.status).toBe('cancelled');

    await expect.poll(() => callbacksOf(created.id).length, { timeout: 30_000 }).toBe(1);
    const [request] = callbacksOf(created.id);
    expectSigned(request!);
    const body = JSON.parse(request!.body) as ListObjectBody & { event: string };
    expect(body).toMatchObject({ id: created.id, event: 'list.cancelled', status: 'cancelled', processed: 0 });
    expect(body.completedAt).not.toBeNull();
    const completed = receiver.requests.filter((other) => other !== request).map((other) => other.headers['x-event-id']);
    expect(completed).not.toContain(request!.headers['x-event-id']);
  }, 60_000);
});
