/** Provider budgets: sessions and recipients per window and egress, recipients per session, lists leaving a share to batches, VERIFY_PROVIDER_BUDGETS over the defaults. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_BUDGETS, ProviderBudgets, parseBudgets } from '../../src/politeness/provider-budgets.ts';
import type { GateTarget } from '../../src/politeness/session-gate.ts';

const google: GateTarget = { key: 'google', provider: 'google', egress: 'direct' };

describe('provider budgets', () => {
  it('grants sessions up to the budget, each with at most its recipients per session, then says how long to wait', async () => {
    const budgets = ProviderBudgets.memory(parseBudgets(undefined), 60_000);
    const grants = [];
    for (let i = 0; i < 6; i++) grants.push(await budgets.take(google, 100, 'batch'));
    expect(grants.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => ({ recipients: 20 })));
    expect(grants[5]).toEqual({ retryInMs: expect.any(Number) });
    // Another egress has its own budget.
    expect(await budgets.take({ ...google, egress: 'proxy-a:1080' }, 100, 'batch')).toEqual({ recipients: 20 });
  });

  it('recipients per window bound the grant; unsent recipients go back', async () => {
    const budgets = ProviderBudgets.memory(parseBudgets('{"google":{"recipientsPerSession":100,"recipientsPerMinute":30}}'), 60_000);
    expect(await budgets.take(google, 25, 'batch')).toEqual({ recipients: 25 });
    expect(await budgets.take(google, 25, 'batch')).toEqual({ recipients: 5 });
    await budgets.giveBack(google, 5);
    expect(await budgets.take(google, 25, 'batch')).toEqual({ recipients: 5 });
    expect(await budgets.take(google, 1, 'batch')).toEqual({ retryInMs: expect.any(Number) });
  });

  it('the session count is corrected once the slot says whether a connection opened', async () => {
    const budgets = ProviderBudgets.memory(parseBudgets('{"google":{"sessionsPerMinute":2}}'), 60_000);
    expect(await budgets.take(google, 1, 'batch')).toEqual({ recipients: 1 });
    expect(await budgets.take(google, 1, 'batch')).toEqual({ recipients: 1 });
    // The second was carried by a parked connection: its session point comes back.
    await budgets.adjustSessions(google, -1);
    expect(await budgets.take(google, 1, 'batch')).toEqual({ recipients: 1 });
    expect(await budgets.take(google, 1, 'batch')).toEqual({ retryInMs: expect.any(Number) });
    // One counted as carried that opened a connection after all: counted, even past the budget.
    await budgets.adjustSessions(google, -1);
    await budgets.adjustSessions(google, 1);
    expect(await budgets.take(google, 1, 'batch')).toEqual({ retryInMs: expect.any(Number) });
  });

  it('a list leaves a fifth of each budget to the batch route', async () => {
    const budgets = ProviderBudgets.memory(parseBudgets(undefined), 60_000);
    const yahoo: GateTarget = { key: 'yahoo', provider: 'yahoo', egress: 'direct' };
    const listGrants = [];
    for (let i = 0; i < 3; i++) listGrants.push(await budgets.take(yahoo, 10, 'list'));
    expect(listGrants.map((grant) => 'recipients' in grant)).toEqual([true, true, false]);
    expect(await budgets.take(yahoo, 10, 'batch')).toEqual({ recipients: 10 });
  });

  it('an unknown provider takes the `*` row, per MX set', async () => {
    const budgets = ProviderBudgets.memory(parseBudgets('{"*":{"sessionsPerMinute":1}}'), 60_000);
    const a: GateTarget = { key: 'mx.a.test', provider: null, egress: 'direct' };
    expect(await budgets.take(a, 500, 'batch')).toEqual({ recipients: 100 });
    expect('retryInMs' in (await budgets.take(a, 1, 'batch'))).toBe(true);
    expect(await budgets.take({ ...a, key: 'mx.b.test' }, 1, 'batch')).toEqual({ recipients: 1 });
  });

  it('VERIFY_PROVIDER_BUDGETS changes only what it names, and refuses what is not a budget', () => {
    const budgets = parseBudgets('{"google":{"sessionsPerMinute":2},"fastmail":{"recipientsPerMinute":10}}');
    expect(budgets.google).toEqual({ ...DEFAULT_BUDGETS.google, sessionsPerMinute: 2 });
    expect(budgets.fastmail).toEqual({ ...DEFAULT_BUDGETS['*'], recipientsPerMinute: 10 });
    expect(() => parseBudgets('{"google":{"sessionsPerMinute":0}}')).toThrow(/VERIFY_PROVIDER_BUDGETS: google.sessionsPerMinute/);
    expect(() => parseBudgets('{"google":{"sessions":2}}')).toThrow(/VERIFY_PROVIDER_BUDGETS/);
    expect(() => parseBudgets('not json')).toThrow(/not JSON/);
  });
});
