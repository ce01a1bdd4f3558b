import { describe, expect, it } from 'vitest';
import { HostLimiter } from '../../src/engine/host-limiter.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('HostLimiter', () => {
  it('never runs more than N tasks per host at once, and other hosts are not held up', async () => {
    const limiter = new HostLimiter(2);
    const signal = new AbortController().signal;
    const running = new Map<string, number>();
    const peak = new Map<string, number>();
    const events: string[] = [];
    // Each task holds its slot until the test ends it: the order is set by the test, not by timers.
    const holding: Array<{ host: string; release: () => void }> = [];
    const task = (host: string) => async () => {
      events.push(`start ${host}`);
      running.set(host, (running.get(host) ?? 0) + 1);
      peak.set(host, Math.max(peak.get(host) ?? 0, running.get(host)!));
      await new Promise<void>((release) => holding.push({ host, release }));
      running.set(host, running.get(host)! - 1);
      events.push(`end ${host}`);
    };
    const all = Promise.all([
      ...Array.from({ length: 6 }, () => limiter.run('10.0.0.1', signal, task('10.0.0.1'))),
      limiter.run('10.0.0.2', signal, task('10.0.0.2')),
    ]);
    // The other host's task started with the first two, before any of the first host's ended:
    // it did not wait behind that host's queue.
    await expect.poll(() => events, { interval: 5 }).toEqual(['start 10.0.0.1', 'start 10.0.0.1', 'start 10.0.0.2']);
    // Each end of a first-host task lets exactly one more of its queue start.
    for (let ended = 1; ended <= 4; ended++) {
      const first = holding.findIndex((held) => held.host === '10.0.0.1');
      holding.splice(first, 1)[0]!.release();
      await expect.poll(() => events.filter((event) => event === 'start 10.0.0.1').length, { interval: 5 }).toBe(2 + ended);
      expect(running.get('10.0.0.1')).toBe(2);
    }
    for (const held of holding.splice(0)) held.release();
    await all;
    expect(peak.get('10.0.0.1')).toBe(2);
    expect(events.filter((event) => event.startsWith('end'))).toHaveLength(7);
  });

  it('serves waiters in order', async () => {
    const limiter = new HostLimiter(1);
    const signal = new AbortController().signal;
    const order: number[] = [];
    await Promise.all([1, 2, 3, 4].map((n) => limiter.run('h', signal, () => Promise.resolve(void order.push(n)))));
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it('a waiter whose deadline passes leaves the queue with the abort reason, and the slot is not lost', async () => {
    const limiter = new HostLimiter(1);
    const blocker = limiter.run('h', new AbortController().signal, () => sleep(50));
    const controller = new AbortController();
    const waiting = limiter.run('h', controller.signal, () => Promise.resolve('never'));
    controller.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('deadline');
    await blocker;
    await expect(limiter.run('h', new AbortController().signal, () => Promise.resolve('next'))).resolves.toBe('next');
  });
});
