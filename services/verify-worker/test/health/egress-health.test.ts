import { describe, expect, it } from 'vitest';
import { closedMessage, egressCheck, type EgressTarget } from '../../src/health/egress-health.ts';

const targets = (count: number): EgressTarget[] => Array.from({ length: count }, (_, i) => ({ host: `192.0.2.${i + 1}`, port: 25 }));

describe('egress check', () => {
  it('stops at the first round in which a canary accepts: a healthy check costs 3 connections per egress', async () => {
    const tried: string[] = [];
    const check = egressCheck({
      targets: () => Promise.resolve(targets(9)),
      egresses: ['direct'],
      label: (egress) => egress,
      connect: (target) => {
        tried.push(target.host);
        return Promise.resolve(target.host === '192.0.2.2');
      },
    });
    expect(await check()).toMatchObject({ healthy: true, detail: { open: ['direct'], closed: [] } });
    expect(tried).toHaveLength(3);
  });

  it('is closed when no canary accepts through any egress, each egress tried on its own, and says what to set', async () => {
    const tried: string[] = [];
    const check = egressCheck({
      targets: () => Promise.resolve(targets(5)),
      egresses: ['a:1080', 'b:1080'],
      label: (egress) => egress,
      connect: (target, egress) => {
        tried.push(`${egress} ${target.host}`);
        return Promise.resolve(false);
      },
    });
    const { healthy, detail } = await check();
    expect(healthy).toBe(false);
    expect(detail.closed.sort()).toEqual(['a:1080', 'b:1080']);
    expect(tried).toHaveLength(10);
    expect(closedMessage(detail)).toContain('VERIFY_SOCKS_PROXY');
  });

  it('one open egress of two keeps port 25 open; no canary known says nothing is closed', async () => {
    const open = egressCheck({
      targets: () => Promise.resolve(targets(2)),
      egresses: ['a:1080', 'b:1080'],
      label: (egress) => egress,
      connect: (_target, egress) => Promise.resolve(egress === 'b:1080'),
    });
    expect(await open()).toMatchObject({ healthy: true, detail: { open: ['b:1080'], closed: ['a:1080'] } });
    const unknown = egressCheck({
      targets: () => Promise.resolve([]),
      egresses: ['direct'],
      label: (egress) => egress,
      connect: () => Promise.resolve(false),
    });
    expect((await unknown()).healthy).toBe(true);
  });
});
