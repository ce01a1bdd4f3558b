/** docs/verification.md stays true to the code: the reply table row by row, the score table point by point. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REASONS } from '@svc/contracts';
import { RCPT_REPLY_TABLE, REASON_POINTS } from '../src/checks/index.ts';

const doc = readFileSync(new URL('../../../docs/verification.md', import.meta.url), 'utf8');
/** Table rows as their trimmed cells (Prettier pads them). */
const rows = doc
  .split('\n')
  .filter((line) => line.startsWith('|'))
  .map((line) =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim()),
  );

describe('docs/verification.md', () => {
  it('lists every rule of the reply table, in order, with what it reads and what it means', () => {
    const table = rows.filter((cells) => cells.length === 3 && ['code', 'enhanced', 'text', 'none'].includes(cells[1] ?? ''));
    expect(table).toEqual(RCPT_REPLY_TABLE.map((rule) => [rule.when, rule.basis, `\`${rule.class}\``]));
  });

  it('gives every reason its points', () => {
    const points = new Map(
      rows.filter((cells) => cells.length === 5).flatMap((cells) => [0, 3].map((i) => [cells[i], cells[i + 1]] as const)),
    );
    for (const reason of REASONS) expect(points.get(`\`${reason}\``)).toBe(String(REASON_POINTS[reason]));
  });

  it('explains every reason', () => {
    const explained = new Set(rows.filter((cells) => cells.length === 2).map((cells) => cells[0]));
    for (const reason of REASONS) expect(explained.has(`\`${reason}\``)).toBe(true);
  });
});
