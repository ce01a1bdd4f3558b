/**
 * Embedded mode's dispatcher against a real receiver on loopback: retried after a 500 and after
 * a hang past the attempt deadline, then delivered; every attempt signed anew with the secret
 * current at that moment and carrying the same event id; never sent unsigned; refused targets
 * not retried; an end to the retries; close() drops what waits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessCallbackDispatcher, generateWebhookSecret, sharedSecret, verifySignature, type SecretSource } from '@svc/webhooks';
import { listCompleted } from './support/events.ts';
import { captureLogs } from './support/logs.ts';
import { startReceiver, type Receiver, type Script } from './support/receiver.ts';

const FAST = { firstDelayMs: 100, maxDelayMs: 400, jitter: 0.2 };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(script: Script, secrets: SecretSource, options: { allowPrivate?: boolean; giveUpAfterMs?: number } = {}) {
  const receiver: Receiver = await startReceiver(script);
  const logs = captureLogs();
  const dispatcher = new InProcessCallbackDispatcher({
    secrets,
    allowPrivate: options.allowPrivate ?? true,
    logger: logs.logger,
    schedule: { ...FAST, giveUpAfterMs: options.giveUpAfterMs ?? 60_000 },
    delivery: { timeoutMs: 500 },
  });
  cleanups.push(
    () => receiver.close(),
    () => dispatcher.close(),
  );
  return { receiver, logs, dispatcher };
}

describe('InProcessCallbackDispatcher', () => {
  it('retries a 500 and a hang past the deadline, then delivers; same event id, each attempt signed', async () => {
    const secret = generateWebhookSecret();
    const script: Script = (_request, index) => (index === 0 ? { status: 500 } : index === 1 ? 'hang' : { status: 200 });
    const { receiver, logs, dispatcher } = await setUp(script, sharedSecret(secret));
    const event = listCompleted(`${receiver.origin}/hooks`);
    await dispatcher.enqueue(event);
    await expect.poll(() => dispatcher.pending, { timeout: 10_000 }).toBe(0);

    expect(receiver.requests).toHaveLength(3);
    for (const request of receiver.requests) {
      expect(request.headers['x-event-id']).toBe(event.id);
      expect(request.body).toBe(event.body);
      expect(verifySignature(request.headers['x-signature'] as string, request.body, secret)).toMatchObject({ ok: true });
    }
    // The retry waited its delay; the hang held the second attempt for its whole deadline (500 ms)
    // before the (longer) second delay. Lower bounds only, less a margin for connection set-up.
    const [first, second, third] = receiver.requests.map((request) => request.at) as [number, number, number];
    expect(second - first).toBeGreaterThanOrEqual(FAST.firstDelayMs * (1 - FAST.jitter));
    expect(third - second).toBeGreaterThanOrEqual(500);
    expect(logs.lines.filter((line) => line.msg === 'callback attempt failed: will retry').map((line) => line.reason)).toEqual([
      'HTTP 500',
      'no answer within 500 ms',
    ]);
    expect(logs.messages()).toContain('callback delivered');
    // The callback's path may carry the receiver's token: only its origin is logged.
    expect(JSON.stringify(logs.lines)).not.toContain('/hooks');
  });

  it('reads the secret at every attempt: a rotated secret signs the next one', async () => {
    const [before, after] = [generateWebhookSecret(), generateWebhookSecret()];
    let current = before;
    const { receiver, dispatcher } = await setUp(
      (_request, index) => {
        current = after;
        return { status: index === 0 ? 500 : 200 };
      },
      () => Promise.resolve(current),
    );
    await dispatcher.enqueue(listCompleted(receiver.origin));
    await expect.poll(() => dispatcher.pending, { timeout: 10_000 }).toBe(0);
    const [first, second] = receiver.requests.map((request) => request.headers['x-signature'] as string);
    expect(verifySignature(first, receiver.requests[0]!.body, before).ok).toBe(true);
    expect(verifySignature(second, receiver.requests[1]!.body, after).ok).toBe(true);
    expect(verifySignature(second, receiver.requests[1]!.body, before)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('never sends unsigned: a key without a secret waits for one, on the schedule', async () => {
    const key: { secret?: string } = {};
    const { receiver, logs, dispatcher } = await setUp(
      () => ({ status: 200 }),
      () => Promise.resolve(key.secret),
    );
    await dispatcher.enqueue(listCompleted(receiver.origin));
    await expect.poll(() => logs.lines.filter((line) => line.msg === 'callback attempt failed: will retry').length).toBeGreaterThan(0);
    expect(receiver.requests).toHaveLength(0);
    key.secret = generateWebhookSecret();
    await expect.poll(() => receiver.requests.length, { timeout: 10_000 }).toBe(1);
    expect(verifySignature(receiver.requests[0]!.headers['x-signature'] as string, receiver.requests[0]!.body, key.secret).ok).toBe(true);
  });

  it('by default refuses a loopback target without sending or retrying', async () => {
    const { receiver, logs, dispatcher } = await setUp(() => ({ status: 200 }), sharedSecret(generateWebhookSecret()), {
      allowPrivate: false,
    });
    await dispatcher.enqueue(listCompleted(`https://127.0.0.1:${receiver.port}/`));
    await expect.poll(() => dispatcher.pending).toBe(0);
    expect(receiver.requests).toHaveLength(0);
    expect(logs.messages()).toEqual(['callback refused by the SSRF guard: not sent, not retried']);
  });

  it('gives up, and says so, once the next attempt would fall outside the retry window', async () => {
    const { receiver, logs, dispatcher } = await setUp(() => ({ status: 500 }), sharedSecret(generateWebhookSecret()), {
      giveUpAfterMs: 700,
    });
    await dispatcher.enqueue(listCompleted(receiver.origin));
    await expect.poll(() => dispatcher.pending, { timeout: 10_000 }).toBe(0);
    const attempts = receiver.requests.length;
    expect(attempts).toBeGreaterThanOrEqual(3);
    const last = logs.lines.at(-1)!;
    expect(last).toMatchObject({ level: 50, attempt: attempts, reason: 'HTTP 500' });
    expect(last.msg).toMatch(/^callback undelivered after \d+ attempts over 0 h: giving up$/);
    // Nothing happens: no attempt after giving up, for longer than the longest delay (400 ms + 20 %).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests).toHaveLength(attempts);
  });

  it('close() drops waiting retries and refuses new events', async () => {
    const { receiver, dispatcher } = await setUp(() => ({ status: 500 }), sharedSecret(generateWebhookSecret()));
    await dispatcher.enqueue(listCompleted(receiver.origin));
    await expect.poll(() => receiver.requests.length).toBe(1);
    await dispatcher.close();
    expect(dispatcher.pending).toBe(0);
    // Nothing happens: the retry that waited (due 100 ms + 20 % after the first attempt) is not sent.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.requests).toHaveLength(1);
    await expect(dispatcher.enqueue(listCompleted(receiver.origin))).rejects.toThrow('closed');
  });

  it('refuses a malformed event at enqueue', async () => {
    const { dispatcher } = await setUp(() => ({ status: 200 }), sharedSecret(generateWebhookSecret()));
    const event = listCompleted('https://hooks.example.com/');
    await expect(dispatcher.enqueue({ ...event, id: 'has:colon' })).rejects.toThrow();
    await expect(dispatcher.enqueue({ ...event, body: 'x'.repeat(70_000) })).rejects.toThrow();
    expect(dispatcher.pending).toBe(0);
  });
});
