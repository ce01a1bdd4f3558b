import { describe, expect, it } from 'vitest';
import { HealthMonitor } from '../../src/health/monitor.ts';

function scripted(results: boolean[]) {
  let checks = 0;
  const changes: boolean[] = [];
  const monitor = new HealthMonitor<number>({
    check: async () => {
      checks += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { healthy: results[Math.min(checks - 1, results.length - 1)] ?? true, detail: checks };
    },
    failedDetail: -1,
    onVerdict: (verdict, changed) => changed && changes.push(verdict.healthy),
    healthyIntervalMs: 60_000,
    unhealthyIntervalMs: 60_000,
  });
  return { monitor, checks: () => checks, changes };
}

describe('HealthMonitor', () => {
  it('waits for the first check, then answers from the latest verdict without checking again', async () => {
    const { monitor, checks } = scripted([true]);
    monitor.start();
    expect(monitor.current).toBeUndefined();
    expect((await monitor.verdict()).healthy).toBe(true);
    await monitor.verdict();
    expect(checks()).toBe(1);
    monitor.stop();
  });

  it('a fresh verdict comes from a check begun after the moment asked for, shared by concurrent askers', async () => {
    const { monitor, checks } = scripted([true, false]);
    monitor.start();
    await monitor.verdict();
    const since = Date.now() + 1;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const [a, b] = await Promise.all([monitor.fresh(since), monitor.fresh(since)]);
    expect([a.healthy, b.healthy]).toEqual([false, false]);
    expect(checks()).toBe(2);
    expect((await monitor.fresh(since)).healthy).toBe(false);
    expect(checks()).toBe(2);
    monitor.stop();
  });

  it('reports a change once: unhealthy at first, healthy again later', async () => {
    const { monitor, changes } = scripted([false, false, true]);
    monitor.start();
    await monitor.verdict();
    await monitor.fresh(Date.now() + 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await monitor.fresh(Date.now() + 1);
    expect(changes).toEqual([false, true]);
    monitor.stop();
  });

  it('a check that throws is an unhealthy verdict with the failure detail', async () => {
    const monitor = new HealthMonitor<string>({ check: () => Promise.reject(new Error('boom')), failedDetail: 'failed' });
    expect(await monitor.verdict()).toMatchObject({ healthy: false, detail: 'failed' });
    monitor.stop();
  });
});
