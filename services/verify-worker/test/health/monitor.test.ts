import { describe, expect, it } from 'vitest';
import { HealthMonitor } from '../../src/health/monitor.ts';

/** A monitor on a clock of the test's own, whose checks answer `results` in turn, each a turn of the event loop later. */
function scripted(results: boolean[]) {
  let checks = 0;
  let clock = 1_000_000;
  const changes: boolean[] = [];
  const monitor = new HealthMonitor<number>({
    now: () => clock,
    check: async () => {
      checks += 1;
      await new Promise((resolve) => setImmediate(resolve));
      return { healthy: results[Math.min(checks - 1, results.length - 1)] ?? true, detail: checks };
    },
    failedDetail: -1,
    onVerdict: (verdict, changed) => changed && changes.push(verdict.healthy),
    healthyIntervalMs: 60_000,
    unhealthyIntervalMs: 60_000,
  });
  const clockOf = { now: () => clock, advance: (ms: number) => void (clock += ms) };
  return { monitor, checks: () => checks, changes, clock: clockOf };
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
    const { monitor, checks, clock } = scripted([true, false]);
    monitor.start();
    await monitor.verdict();
    const since = clock.now() + 1;
    clock.advance(5);
    const [a, b] = await Promise.all([monitor.fresh(since), monitor.fresh(since)]);
    expect([a.healthy, b.healthy]).toEqual([false, false]);
    expect(checks()).toBe(2);
    expect((await monitor.fresh(since)).healthy).toBe(false);
    expect(checks()).toBe(2);
    monitor.stop();
  });

  it('reports a change once: unhealthy at first, healthy again later', async () => {
    const { monitor, changes, clock } = scripted([false, false, true]);
    monitor.start();
    await monitor.verdict();
    await monitor.fresh(clock.now() + 1);
    clock.advance(5);
    await monitor.fresh(clock.now() + 1);
    expect(changes).toEqual([false, true]);
    monitor.stop();
  });

  it('a check that throws is an unhealthy verdict with the failure detail', async () => {
    const monitor = new HealthMonitor<string>({ check: () => Promise.reject(new Error('boom')), failedDetail: 'failed' });
    expect(await monitor.verdict()).toMatchObject({ healthy: false, detail: 'failed' });
    monitor.stop();
  });
});
