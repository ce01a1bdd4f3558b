/** The compact stored form keeps what the key's reports added: probability and checks.history (docs/feedback.md). */
import { describe, expect, it } from 'vitest';
import { decodeCompactResult, encodeCompactResult, verifyResultSchema, type VerifyResult } from '../src/index.ts';

const base: Omit<VerifyResult, 'email'> = {
  score: 66,
  verdict: 'risky',
  reason: 'accept_all',
  checks: {
    syntax: true,
    domainExists: true,
    mx: ['mx.x.test'],
    smtp: 'accepted',
    catchAll: true,
    disposable: false,
    role: false,
    free: false,
    provider: null,
  },
};

const roundTrip = (result: Omit<VerifyResult, 'email'>, extra?: string) => {
  const decoded = decodeCompactResult(encodeCompactResult(extra === undefined ? result : { ...result, extra }));
  return { parsed: verifyResultSchema.parse({ email: 'a@x.test', ...decoded?.fields }), extra: decoded?.extra };
};

describe('compact results with feedback', () => {
  it('keeps probability and history, with or without a suggestion', () => {
    const history = { bounces: 0, deliveries: 2, complaints: 0, lastEventAt: '2026-11-20T10:00:00.000Z' };
    const learnt = { ...base, probability: 0.83, checks: { ...base.checks, history } };
    expect(roundTrip(learnt)).toEqual({ parsed: { email: 'a@x.test', ...learnt }, extra: undefined });
    expect(roundTrip(learnt, 'a@y.test').extra).toBe('a@y.test');
    const none = { ...base, checks: { ...base.checks, history: null } };
    expect(roundTrip(none).parsed).toEqual({ email: 'a@x.test', ...none });
  });

  it('reads results written before, and writes them as before when nothing was learnt', () => {
    expect(encodeCompactResult(base)).toBe('66|14|111000|a|[["mx.x.test"],null]');
    expect(roundTrip(base).parsed).toEqual({ email: 'a@x.test', ...base });
  });
});
