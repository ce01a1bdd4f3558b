/**
 * The Feedback page's reading of a CSV of bounces: the outcome column by its header or its cells,
 * the sending services' words for outcomes, and every row it cannot send refused with its row
 * number (as a spreadsheet numbers it) and why.
 */
import { describe, expect, it } from 'vitest';
import { readRows } from '../src/csv.ts';
import { chunks, feedbackRows, findOutcomeColumn, outcomeOf } from '../src/feedback-csv.ts';

describe('a CSV of bounces', () => {
  it('reads the services’ words for outcomes', () => {
    expect(['Hard bounce', 'bounce', 'BOUNCED', 'hard-bounce'].map(outcomeOf)).toEqual(Array(4).fill('hard_bounce'));
    expect(['deferred', 'Soft Bounce'].map(outcomeOf)).toEqual(['soft_bounce', 'soft_bounce']);
    expect(['Delivery', 'delivered'].map(outcomeOf)).toEqual(['delivered', 'delivered']);
    expect(['spamreport', 'SpamComplaint', 'complaint'].map(outcomeOf)).toEqual(['complaint', 'complaint', 'complaint']);
    expect(['opened', 'click', ''].map(outcomeOf)).toEqual([null, null, null]);
  });

  it('finds the outcome column by its header, else by its cells', () => {
    const named = readRows(
      [
        ['Note', 'Email', 'Event'],
        ['x', 'a@b.test', 'whatever'],
        ['y', 'c@b.test', 'bounce'],
      ],
      'UTF-8',
    );
    expect(findOutcomeColumn(named, named.detected.index)).toBe(2);
    const unnamed = readRows(
      [
        ['a@b.test', 'note', 'bounce'],
        ['c@b.test', 'other', 'delivered'],
      ],
      'UTF-8',
    );
    expect(findOutcomeColumn(unnamed, unnamed.detected.index)).toBe(2);
    const none = readRows(
      [
        ['email', 'name'],
        ['a@b.test', 'Ann'],
      ],
      'UTF-8',
    );
    expect(findOutcomeColumn(none, none.detected.index)).toBeNull();
  });

  it('refuses what it cannot send, by row number and why', () => {
    const read = readRows(
      [
        ['email', 'event'],
        ['a@b.test', 'bounce'],
        ['', 'bounce'],
        ['not an address', 'delivered'],
        ['c@b.test', 'opened'],
        ['d@b.test', ''],
        ['Ann@B.test', 'Delivery'],
      ],
      'UTF-8',
    );
    const rows = feedbackRows(read, 0, 1);
    expect(rows.events).toEqual([
      { email: 'a@b.test', outcome: 'hard_bounce' },
      { email: 'Ann@B.test', outcome: 'delivered' },
    ]);
    expect(rows.counts).toEqual({ hard_bounce: 1, soft_bounce: 0, delivered: 1, complaint: 0 });
    expect(rows.refused).toEqual([
      { row: 3, address: '', why: 'no address' },
      { row: 4, address: 'not an address', why: 'not an e-mail address' },
      { row: 5, address: 'c@b.test', why: '"opened" is not an outcome (hard_bounce, soft_bounce, delivered, complaint)' },
      { row: 6, address: 'd@b.test', why: 'no outcome' },
    ]);
  });

  it('sends a long file in calls of 1,000 events at most', () => {
    expect(chunks(Array.from({ length: 2_001 }, (_, i) => i)).map((part) => part.length)).toEqual([1_000, 1_000, 1]);
  });
});
