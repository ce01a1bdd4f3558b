/**
 * Verdict precedence and the score's ordering: enumerating every combination of facts proves that
 * every deliverable scores above every risky and every risky above every undeliverable.
 */
import { describe, expect, it } from 'vitest';
import { FEEDBACK_REASONS, REASONS, VERDICTS } from '@svc/contracts';
import { decide, score, type AddressFacts, type DnsOutcome, type SmtpOutcome } from '../../src/checks/index.ts';

const base: AddressFacts = { syntaxOk: true, disposable: false, role: false, free: false, dns: 'ok', smtp: 'accepted', catchAll: false };

describe('verdict rules', () => {
  it.each<[Partial<AddressFacts>, string, string]>([
    [{}, 'deliverable', 'accepted_email'],
    [{ free: true }, 'deliverable', 'accepted_email'],
    [{ syntaxOk: false }, 'undeliverable', 'invalid_syntax'],
    [{ dns: 'nxdomain' }, 'undeliverable', 'invalid_domain'],
    [{ dns: 'null_mx' }, 'undeliverable', 'invalid_domain'],
    [{ dns: 'no_mail_host' }, 'undeliverable', 'invalid_domain'],
    [{ dns: 'temp_error', smtp: 'not_probed' }, 'risky', 'unexpected_error'],
    [{ dns: 'timeout', smtp: 'not_probed' }, 'risky', 'timeout'],
    [{ smtp: 'rejected_unknown' }, 'undeliverable', 'rejected_email'],
    [{ smtp: 'rejected_unknown', disposable: true }, 'undeliverable', 'rejected_email'],
    [{ smtp: 'disabled' }, 'undeliverable', 'mailbox_disabled'],
    [{ disposable: true }, 'risky', 'disposable'],
    [{ catchAll: true }, 'risky', 'accept_all'],
    [{ catchAll: null }, 'risky', 'accept_all'],
    [{ role: true }, 'risky', 'role_account'],
    [{ smtp: 'full' }, 'risky', 'mailbox_full'],
    [{ smtp: 'greylisted' }, 'risky', 'greylisted'],
    [{ smtp: 'blocked' }, 'risky', 'smtp_blocked'],
    [{ smtp: 'timeout' }, 'risky', 'timeout'],
    [{ smtp: 'no_connect' }, 'risky', 'no_connect'],
    [{ smtp: 'inconclusive' }, 'risky', 'accept_all'],
    [{ smtp: 'unknown' }, 'risky', 'unexpected_error'],
    [{ smtp: 'needs_smtputf8' }, 'risky', 'unexpected_error'],
  ])('%j → %s / %s', (facts, verdict, reason) => {
    expect(decide({ ...base, ...facts })).toMatchObject({ verdict, reason });
  });

  it.each<[Partial<AddressFacts>, string, string]>([
    [{ smtp: 'not_this_host' }, 'risky', 'no_connect'],
    [{ smtp: 'no_target' }, 'risky', 'no_connect'],
    [{ smtp: 'temporary' }, 'risky', 'greylisted'],
    [{ smtp: 'error' }, 'risky', 'unexpected_error'],
  ])('%j → %s / %s', (facts, verdict, reason) => {
    expect(decide({ ...base, ...facts })).toMatchObject({ verdict, reason });
  });

  // The verifier's own blind spots: an untrusted resolver declares nothing dead, a closed port 25 decides nothing.
  it.each<[Partial<AddressFacts>, string, string]>([
    [{ dns: 'nxdomain', smtp: 'not_probed', resolverTrusted: false }, 'risky', 'dns_unavailable'],
    [{ dns: 'null_mx', smtp: 'not_probed', resolverTrusted: false }, 'risky', 'dns_unavailable'],
    [{ dns: 'no_mail_host', smtp: 'not_probed', resolverTrusted: false }, 'risky', 'dns_unavailable'],
    [{ dns: 'timeout', smtp: 'not_probed', resolverTrusted: false }, 'risky', 'dns_unavailable'],
    [{ dns: 'temp_error', smtp: 'not_probed', resolverTrusted: false }, 'risky', 'dns_unavailable'],
    [{ dns: 'nxdomain', smtp: 'not_probed', resolverTrusted: true }, 'undeliverable', 'invalid_domain'],
    [{ resolverTrusted: false }, 'deliverable', 'accepted_email'],
    [{ smtp: 'unavailable' }, 'risky', 'smtp_unavailable'],
    [{ smtp: 'unavailable', disposable: true }, 'risky', 'disposable'],
  ])('%j → %s / %s', (facts, verdict, reason) => {
    expect(decide({ ...base, ...facts })).toMatchObject({ verdict, reason });
  });

  it('reports what SMTP said, and null where no server was asked', () => {
    expect(decide(base).smtp).toBe('accepted');
    expect(decide({ ...base, smtp: 'disabled' }).smtp).toBe('rejected');
    expect(decide({ ...base, smtp: 'greylisted' }).smtp).toBe('unknown');
    expect(decide({ ...base, smtp: 'timeout' }).smtp).toBe('unknown');
    expect(decide({ ...base, syntaxOk: false }).smtp).toBeNull();
    expect(decide({ ...base, dns: 'nxdomain', smtp: 'not_probed' }).smtp).toBeNull();
    expect(decide({ ...base, dns: 'temp_error', smtp: 'not_probed' }).smtp).toBeNull();
    expect(decide({ ...base, smtp: 'no_target' }).smtp).toBeNull();
    expect(decide({ ...base, smtp: 'needs_smtputf8' }).smtp).toBeNull();
    expect(decide({ ...base, smtp: 'unavailable' }).smtp).toBeNull();
  });
});

describe('score', () => {
  const dns: DnsOutcome[] = ['ok', 'nxdomain', 'null_mx', 'no_mail_host', 'temp_error', 'timeout'];
  const smtp: SmtpOutcome[] = [
    'accepted',
    'inconclusive',
    'rejected_unknown',
    'disabled',
    'full',
    'greylisted',
    'blocked',
    'temporary',
    'unknown',
    'timeout',
    'no_connect',
    'no_target',
    'not_this_host',
    'not_probed',
    'needs_smtputf8',
    'unavailable',
    'error',
  ];
  const all: Array<{ verdict: string; reason: string; score: number }> = [];
  for (const syntaxOk of [true, false])
    for (const d of dns)
      for (const s of smtp)
        for (const disposable of [true, false])
          for (const role of [true, false])
            for (const catchAll of [true, false, null])
              for (const typo of [true, false])
                for (const resolverTrusted of [true, false]) {
                  const facts: AddressFacts = { syntaxOk, dns: d, smtp: s, disposable, role, free: false, catchAll, resolverTrusted };
                  const decision = decide(facts);
                  all.push({ ...decision, score: score(facts, decision, typo) });
                }

  it('orders the verdicts: deliverable > risky > undeliverable, undeliverable within 0..10', () => {
    const scores = (verdict: string) => all.filter((entry) => entry.verdict === verdict).map((entry) => entry.score);
    expect(Math.min(...scores('deliverable'))).toBeGreaterThan(Math.max(...scores('risky')));
    expect(Math.min(...scores('risky'))).toBeGreaterThan(Math.max(...scores('undeliverable')));
    expect(Math.max(...scores('undeliverable'))).toBeLessThanOrEqual(10);
    expect(all.every((entry) => Number.isInteger(entry.score) && entry.score >= 0 && entry.score <= 100)).toBe(true);
  });

  it('gives invalid syntax 0 and covers every verdict and many reasons', () => {
    expect(all.filter((entry) => entry.reason === 'invalid_syntax').every((entry) => entry.score === 0)).toBe(true);
    expect(new Set(all.map((entry) => entry.verdict))).toEqual(new Set(VERDICTS));
    expect(new Set(all.map((entry) => entry.reason)).size).toBeGreaterThanOrEqual(REASONS.length - FEEDBACK_REASONS.length - 1);
  });
});
