import { describe, expect, it } from 'vitest';
import {
  REASONS,
  REASON_LEGEND,
  flagsOf,
  neutraliseCell,
  reasonSentence,
  resultCells,
  resultsLegend,
  type FileResult,
} from '../src/index.ts';

const checks = { role: true, free: false, disposable: null, catchAll: true, provider: 'google' };
const risky: FileResult = { verdict: 'risky', score: 55, reason: 'accept_all', checks };

describe('results file', () => {
  it('neutralises every cell a spreadsheet would run as a formula, and only those', () => {
    for (const cell of ['=HYPERLINK("http://x")', "=cmd|' /C calc'!A0", '+1', '-2', '@SUM(A1)', '\tx', '\rx'])
      expect(neutraliseCell(cell)).toBe(`'${cell}`);
    for (const cell of ['ann@x.test', 'Smørrebrød ApS', '', ' =1', "'quoted"]) expect(neutraliseCell(cell)).toBe(cell);
  });

  it('the full form says what to do, which checks were true, the provider and a probability where one is given', () => {
    expect(resultCells(risky, 'default')).toEqual(['risky', '55', 'accept_all', '']);
    expect(resultCells(risky, 'full', true)).toEqual(['risky', '55', 'accept_all', '', 'review', 'role;catch_all;duplicate', 'google', '']);
    expect(resultCells({ ...risky, probability: 0.7 }, 'full')).toEqual([
      'risky',
      '55',
      'accept_all',
      '',
      'review',
      'role;catch_all',
      'google',
      '0.70',
    ]);
    const deliverable: FileResult = {
      verdict: 'deliverable',
      score: 95,
      reason: 'accepted_email',
      checks: { ...checks, role: false, catchAll: false, provider: null },
    };
    expect(resultCells(deliverable, 'full')[4]).toBe('keep');
    expect(resultCells({ ...deliverable, verdict: 'undeliverable' }, 'full')[4]).toBe('remove');
    expect(resultCells(null, 'full', false, 'not_verified')).toEqual(['', '', 'not_verified', '', '', '', '', '']);
    expect(flagsOf({ role: false, free: true, disposable: true, catchAll: null }, false)).toEqual(['free', 'disposable']);
  });

  it('has a plain sentence for every reason the verifier gives, and for not_verified', () => {
    for (const reason of [...REASONS, 'not_verified' as const]) expect(REASON_LEGEND[reason]).toMatch(/^[A-Z].+\.$/);
    expect(reasonSentence('something_new')).toContain('something_new');
  });

  it('the legend gives each verdict its share and each reason its count, most frequent first', () => {
    const legend = resultsLegend({ deliverable: 1, risky: 2, undeliverable: 1 }, { accept_all: 2, accepted_email: 1, rejected_email: 1 });
    expect(legend.verdicts.map((line) => [line.code, line.percent])).toEqual([
      ['deliverable', 25],
      ['risky', 50],
      ['undeliverable', 25],
    ]);
    expect(legend.reasons.map((line) => [line.code, line.count])).toEqual([
      ['accept_all', 2],
      ['accepted_email', 1],
      ['rejected_email', 1],
    ]);
    expect(legend.reasons[0]!.sentence).toBe(REASON_LEGEND.accept_all);
  });
});
