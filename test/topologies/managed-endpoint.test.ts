/**
 * A managed primary endpoint (`REDIS_URL`) that fails over (decisions, "Redis topologies"): the
 * endpoint's name moves to the promoted replica, while the product's open connections still
 * reach the old primary, now a replica answering `READONLY`. The product must reconnect on
 * READONLY rather than retry the same node forever (the issue saw every call 503 forever).
 * A TCP proxy stands for the endpoint's name; the switch-over is the one a managed service makes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailRig, startRedisReplicaPair, startTcpProxy, type MailRig, type ReplicaPair, type TcpProxy } from '@svc/testkit';
import { runLoad, type Call } from './load.ts';
import { readyStatus, startTopologyProduct, type TopologyProduct } from './product.ts';

let pair: ReplicaPair | undefined;
let endpoint: TcpProxy | undefined;
let mail: MailRig | undefined;
let product: TopologyProduct | undefined;

beforeAll(async () => {
  pair = await startRedisReplicaPair();
  endpoint = await startTcpProxy(`redis://127.0.0.1:${pair.primary.port}`);
  mail = await startMailRig('managed.test', '127.0.0.62', ['ann@managed.test']);
  product = await startTopologyProduct({ REDIS_URL: endpoint.url }, { ...mail.env, RATE_LIMIT_QR_GENERATE: '0' });
});
afterAll(async () => {
  await product?.close();
  await endpoint?.close();
  await pair?.close();
  await mail?.close();
});

describe('a managed primary endpoint that fails over', () => {
  it('READONLY on the old connections makes them reconnect: writes reach the new primary within 10 s, readiness and meter follow', async () => {
    const p = product!;
    const headers = { authorization: `Bearer ${p.key.key}` };
    const calls: Call[] = [];
    const load = runLoad(`${p.baseUrl}/v1/qr/qr?data=managed`, headers, 4, calls);
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const switchedAt = Date.now();
    endpoint!.retarget(`redis://127.0.0.1:${pair!.replica.port}`);
    await pair!.switchOver();
    let recoveredAt: number | undefined;
    try {
      let ready: number[] = [];
      while (Date.now() - switchedAt < 15_000) {
        recoveredAt ??= calls.find((call) => call.status === 200 && call.startedAt > switchedAt)?.endedAt;
        ready = await Promise.all(p.processes.map((proc) => readyStatus(proc.readyUrl)));
        if (recoveredAt !== undefined && ready.every((status) => status === 200)) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(recoveredAt, `no call succeeded after the switch-over\n${p.output()}`).toBeDefined();
      expect(ready, `readiness after the switch-over (gateway, qr-worker, verify-worker)\n${p.output()}`).toEqual([200, 200, 200]);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    } finally {
      await load.stop();
    }
    const answered = calls.filter((call) => call.status === 200).length;
    const late = calls.filter((call) => call.startedAt > recoveredAt! + 1_000);
    const usage = await fetch(`${p.baseUrl}/v1/usage`, { headers });
    const metered = ((await usage.json()) as { operations: Record<string, { calls: number }> }).operations['qr.generate']?.calls ?? 0;
    const byStatus = calls.reduce<Record<number, number>>((out, call) => ({ ...out, [call.status]: (out[call.status] ?? 0) + 1 }), {});
    console.log(
      `[topology] managed endpoint switched over: calls succeed again ${recoveredAt! - switchedAt} ms after the switch; ` +
        `answers ${JSON.stringify(byStatus)}; metered ${metered} of ${answered} 200s`,
    );

    expect(recoveredAt! - switchedAt).toBeLessThanOrEqual(10_000);
    // Not "503 forever": once recovered, every call succeeds.
    expect(late.length).toBeGreaterThan(0);
    expect(late.filter((call) => call.status !== 200)).toEqual([]);
    expect(metered).toBeLessThanOrEqual(answered);
    expect(metered).toBeGreaterThanOrEqual(Math.floor(answered * 0.9));
    expect(p.output()).not.toMatch(/UNCAUGHT|unhandled/i);
  });
});
