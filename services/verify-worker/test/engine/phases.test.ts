/**
 * The verifier's phases read alone (engine/phases/): each takes a batch's state and leaves its
 * part of the answer there, with no server, resolver or Redis behind it.
 */
import { describe, expect, it } from 'vitest';
import { parseAddress, type ParsedAddress } from '../../src/checks/index.ts';
import { BatchState } from '../../src/engine/batch-state.ts';
import { decideAddress, type AddressEvidence } from '../../src/engine/phases/decide.ts';
import { parsePhase } from '../../src/engine/phases/parse.ts';
import { trustPhase } from '../../src/engine/phases/trust.ts';
import type { ProbeOutcome } from '../../src/engine/mail-server-probe.ts';
import type { VerifierHealth } from '../../src/engine/verifier-deps.ts';

const call = () => ({ signal: new AbortController().signal, deadlineAt: Date.now() + 5_000 });
const parsed = (email: string): ParsedAddress => {
  const result = parseAddress(email);
  if (!result.ok) throw new Error(`${email} does not parse`);
  return result;
};
const rcpt = (code: number, text: string, enhanced?: string): ProbeOutcome => ({
  kind: 'rcpt',
  reply: { code, text, ...(enhanced === undefined ? {} : { enhanced }) },
  server: '192.0.2.1',
});

describe('parse phase', () => {
  it('takes each entry once by its dedup key, settles bad syntax, and reports progress against the total', () => {
    const progress: Array<[number, number]> = [];
    const batch = new BatchState({ ...call(), onSettled: (settled, total) => progress.push([settled, total]) });
    parsePhase(['Ann@Shop.test', 'ann@shop.test', 'broken', 'bob@shop.test'], batch);
    expect([...batch.toProbe.values()].map((address) => address.address)).toEqual(['Ann@shop.test', 'bob@shop.test']);
    expect([...batch.settled.values()].map((outcome) => outcome.result.reason)).toEqual(['invalid_syntax']);
    expect(progress).toEqual([[1, 3]]);
  });
});

describe('trust phase', () => {
  const health = (asked: string[]): VerifierHealth => ({
    resolverTrustedSince: (since) => (asked.push(`since ${since}`), Promise.resolve(false)),
    resolverTrusted: () => (asked.push('latest'), Promise.resolve(true)),
    egressOpen: () => Promise.resolve(true),
    egressOpenSince: () => Promise.resolve(true),
    latest: () => ({ resolverTrusted: false, egressOpen: true }),
  });

  it('believes a negative answer only from a resolver checked after the question was asked', async () => {
    const asked: string[] = [];
    const batch = new BatchState(call());
    batch.domains = ['gone.test'];
    batch.lookups.set('gone.test', { kind: 'nxdomain' });
    batch.lookedUpAt = 1234;
    await trustPhase(batch, { health: health(asked) });
    expect(asked).toEqual(['since 1234']);
    expect(batch.sight).toEqual({ resolverTrusted: false, canProbe: true });
  });

  it('takes the latest verdict when every domain has mail hosts', async () => {
    const asked: string[] = [];
    const batch = new BatchState(call());
    batch.domains = ['shop.test'];
    batch.lookups.set('shop.test', { kind: 'mx', names: ['mx.shop.test'], hosts: [{ name: 'mx.shop.test', addresses: ['192.0.2.1'] }] });
    await trustPhase(batch, { health: health(asked) });
    expect(asked).toEqual(['latest']);
    expect(batch.sight.resolverTrusted).toBe(true);
  });
});

describe('decide phase: one address from its evidence', () => {
  const evidence = (address: string, outcomes: Array<[string, ProbeOutcome]>): AddressEvidence => ({
    parsed: parsed(address),
    lookup: { kind: 'mx', names: ['mx.shop.test'], hosts: [{ name: 'mx.shop.test', addresses: ['192.0.2.1'] }] },
    outcomes: new Map(outcomes),
    controls: new Map([['shop.test', 'x9q@shop.test']]),
    findings: new Map(),
    signal: new AbortController().signal,
    suggestedDomain: undefined,
    sight: { resolverTrusted: true, canProbe: true },
  });

  it('an accepted mailbox whose control was refused is deliverable', () => {
    const outcome = decideAddress(
      evidence('ann@shop.test', [
        ['x9q@shop.test', rcpt(550, 'no such user', '5.1.1')],
        ['ann@shop.test', rcpt(250, 'OK', '2.1.5')],
      ]),
    );
    expect([outcome.result.verdict, outcome.result.reason]).toEqual(['deliverable', 'accepted_email']);
  });

  it('a domain whose control was accepted too is catch-all: risky', () => {
    const outcome = decideAddress(
      evidence('ann@shop.test', [
        ['x9q@shop.test', rcpt(250, 'OK', '2.1.5')],
        ['ann@shop.test', rcpt(250, 'OK', '2.1.5')],
      ]),
    );
    expect([outcome.result.verdict, outcome.result.reason, outcome.result.checks.catchAll]).toEqual(['risky', 'accept_all', true]);
  });

  it('an address the provider gate left unasked is throttled, and says nothing of the mailbox', () => {
    const outcome = decideAddress(
      evidence('ann@shop.test', [
        ['x9q@shop.test', rcpt(550, 'no such user', '5.1.1')],
        ['ann@shop.test', { kind: 'throttled', until: Date.now() + 60_000 }],
      ]),
    );
    expect([outcome.result.verdict, outcome.result.reason, outcome.result.checks.smtp]).toEqual(['risky', 'throttled', null]);
  });
});
