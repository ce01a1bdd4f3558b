import { toJobEntry, type VerifyResult } from '@svc/contracts';
import { describe, expect, it } from 'vitest';
import { perform } from '../../src/operations/operation.ts';
import { verifyBatch } from '../../src/operations/verify-batch.ts';
import { verifySingle } from '../../src/operations/verify-single.ts';
import { call, recordingRunner } from './support.ts';

const CHECKS: VerifyResult['checks'] = {
  syntax: true,
  domainExists: true,
  mx: ['mx.example.com'],
  smtp: 'accepted',
  catchAll: false,
  disposable: false,
  role: false,
  free: false,
  provider: null,
};

const result = (email: string, verdict: VerifyResult['verdict'], reason: VerifyResult['reason']): VerifyResult => ({
  email,
  score: verdict === 'deliverable' ? 95 : 0,
  verdict,
  reason,
  checks: CHECKS,
});

describe('the verify operations', () => {
  it('batch: submit the addresses and answer one result per entry, as submitted and in order, with the summary', async () => {
    const emails = ['Ann@Example.com ', 'bob@example.com'];
    const runner = recordingRunner({
      results: [
        toJobEntry(result('x@example.com', 'deliverable', 'accepted_email')),
        toJobEntry(result('y@example.com', 'undeliverable', 'rejected_email')),
      ],
    });
    const body = await perform(verifyBatch, runner, verifyBatch.input.rest.parse({ emails }), call);
    expect(runner.submitted).toEqual([{ operation: 'email-verify.batch', kind: 'verify', payload: { emails } }]);
    expect(body.results.map((entry) => [entry.email, entry.verdict])).toEqual([
      ['Ann@Example.com ', 'deliverable'],
      ['bob@example.com', 'undeliverable'],
    ]);
    expect(body).toMatchObject({ count: 2, summary: { deliverable: 1, risky: 0, undeliverable: 1 } });
  });

  it('single: run a batch of one and answer its result, the typo suggestion at the address’s own local part', async () => {
    const runner = recordingRunner({
      results: [{ ...toJobEntry(result('a@gmial.com', 'risky', 'accept_all')), didYouMeanDomain: 'gmail.com' }],
    });
    const answer = await perform(verifySingle, runner, verifySingle.input.tool.parse({ email: 'a@gmial.com' }), call);
    expect(runner.submitted).toEqual([{ operation: 'email-verify.single', kind: 'verify', payload: { emails: ['a@gmial.com'] } }]);
    expect(answer).toMatchObject({ email: 'a@gmial.com', verdict: 'risky', didYouMean: 'a@gmail.com' });
  });

  it('refuse bad input with the contract’s error, the same through the body and the arguments', () => {
    const tooMany = verifyBatch.input.tool.safeParse({ emails: Array.from({ length: 101 }, (_, index) => `a${index}@example.com`) });
    expect(tooMany.success).toBe(false);
    if (!tooMany.success) expect(verifyBatch.input.invalid(tooMany.error).code).toBe('too_many_emails');
    const unknown = verifySingle.input.rest.safeParse({ email: 'a@example.com', fast: '1' });
    expect(unknown.success).toBe(false);
    if (!unknown.success)
      expect(verifySingle.input.invalid(unknown.error).toBody()).toMatchObject({ error: 'invalid_parameter', details: { param: 'fast' } });
  });
});
