/**
 * What the results page reads from a full-form results file: the reasons behind each verdict,
 * the catch-all probabilities and their spread in tenths, and the download of the catch-all rows
 * at or above a probability (same columns and delimiter, byte-order mark kept).
 */
import { describe, expect, it } from 'vitest';
import { catchAllAtOrAbove, catchAllProbabilities, countAtOrAbove, reasonsByVerdict, spread } from '../src/results.ts';

const FILE =
  '\ufeffName;Email;verdict;score;reason;did_you_mean;action;flags;provider;probability\r\n' +
  'A;a@c.test;risky;62;accept_all;;review;catch_all;;0.30\r\n' +
  'B;b@c.test;risky;71;accept_all;;review;catch_all;;0.84\r\n' +
  'C;c@d.test;undeliverable;3;known_bounce;;remove;;;\r\n' +
  'D;d@e.test;risky;40;greylisted;;review;;;\r\n' +
  'E;e@c.test;risky;75;accept_all;;review;catch_all;;1.00\r\n' +
  'F;f@c.test;deliverable;95;accepted_email;;keep;;;\r\n' +
  'G;;;;;;;;;\r\n';
const [header, ...rows] = FILE.replace(/^\ufeff/, '')
  .trim()
  .split('\r\n')
  .map((line) => line.split(';'));

describe('the results page’s reading of the file', () => {
  it('counts each verdict’s reasons, most frequent first, leaving unverified rows out', () => {
    expect(reasonsByVerdict(header!, rows)).toEqual({
      deliverable: [['accepted_email', 1]],
      risky: [
        ['accept_all', 3],
        ['greylisted', 1],
      ],
      undeliverable: [['known_bounce', 1]],
    });
  });

  it('spreads the catch-all probabilities in tenths, 0.30 in the fourth and 1.00 in the last', () => {
    const probabilities = catchAllProbabilities(header!, rows);
    expect(probabilities).toEqual([0.3, 0.84, 1]);
    expect(spread(probabilities)).toEqual([0, 0, 0, 1, 0, 0, 0, 0, 1, 1]);
    expect(countAtOrAbove(probabilities, 0.3)).toBe(3);
    expect(countAtOrAbove(probabilities, 0.31)).toBe(2);
  });

  it('cuts the catch-all rows at or above a probability, in the file’s form', () => {
    expect(catchAllAtOrAbove(FILE, 0.84)).toBe(
      '\ufeffName;Email;verdict;score;reason;did_you_mean;action;flags;provider;probability\r\n' +
        'B;b@c.test;risky;71;accept_all;;review;catch_all;;0.84\r\n' +
        'E;e@c.test;risky;75;accept_all;;review;catch_all;;1.00\r\n',
    );
    expect(catchAllAtOrAbove(FILE, 0)).not.toContain('known_bounce');
  });
});
