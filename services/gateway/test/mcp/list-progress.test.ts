/**
 * The throttle of a list-create call's progress and the rows it counts on. A tool request holds
 * at most 64 KiB, which the gateway reads and stores in a tenth of a second: the calls of
 * test/mcp/progress-lists.test.ts see the first and the last notification only, so the throttle
 * between is checked here, as the pure logic it is.
 */
import { describe, expect, it } from 'vitest';
import { throttled } from '../../src/mcp/progress.ts';
import { csvRowsAtMost } from '../../src/operations/lists/create.ts';

describe('the throttle of list progress', () => {
  it('sends the first report at once, then at most one per 250 ms, and the end', () => {
    const sent: Array<[number, number]> = [];
    let now = 1_000;
    const progress = throttled(
      (done, total) => sent.push([done, total]),
      250,
      () => now,
    );
    for (let row = 0; row < 1_000; row += 1) {
      progress.report(row, 1_000);
      now += 1; // a row a millisecond: a second in all
    }
    progress.finish();
    expect(sent[0]).toEqual([0, 1_000]);
    expect(sent.map(([done]) => done)).toEqual([0, 250, 500, 750, 1_000]);
    for (const [, total] of sent) expect(total).toBe(1_000);
  });

  it('sends nothing at the end of a call that reported nothing', () => {
    const sent: number[] = [];
    throttled((done) => sent.push(done)).finish();
    expect(sent).toEqual([]);
  });

  it("counts a CSV text's rows at most: lines not blank, the header excepted", () => {
    expect(csvRowsAtMost('email\r\na@x.test\r\n\r\nb@x.test', true)).toBe(2);
    expect(csvRowsAtMost('a@x.test\rb@x.test\r', false)).toBe(2);
    expect(csvRowsAtMost('email\n', undefined)).toBe(1);
  });
});
