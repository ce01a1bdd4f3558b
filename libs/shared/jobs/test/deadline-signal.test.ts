import { execFile } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { deadlineSignal } from '../src/deadline-signal.ts';

const run = promisify(execFile);

describe('deadlineSignal', () => {
  it('aborts at the deadline with a TimeoutError', async () => {
    const { signal, expired } = deadlineSignal(Date.now() + 30);
    expect(signal.aborted).toBe(false);
    expect(expired()).toBe(false);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    // Said by the timer itself: it may fire a millisecond before the clock reads the deadline.
    expect(expired()).toBe(true);
    expect(signal.reason).toBeInstanceOf(DOMException);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('aborts with a source, at once when the source has already aborted', () => {
    const source = new AbortController();
    const { signal, expired } = deadlineSignal(Date.now() + 60_000, [source.signal]);
    source.abort(new Error('caller gone'));
    expect(signal.aborted).toBe(true);
    expect(expired()).toBe(false);
    expect(signal.reason).toEqual(new Error('caller gone'));

    const early = deadlineSignal(Date.now() + 60_000, [AbortSignal.abort('shut down')]);
    expect(early.signal.aborted).toBe(true);
    expect(early.signal.reason).toBe('shut down');
  });

  it('release stops the deadline and leaves no listener on its sources', async () => {
    const source = new AbortController();
    const { signal, release } = deadlineSignal(Date.now() + 20, [source.signal]);
    expect(getEventListeners(source.signal, 'abort')).toHaveLength(1);
    release();
    expect(getEventListeners(source.signal, 'abort')).toHaveLength(0);
    // Timers fire in the order of their deadlines: once a later deadline has fired, the released
    // one would have fired before it.
    const later = deadlineSignal(Date.now() + 40);
    await new Promise((resolve) => later.signal.addEventListener('abort', resolve, { once: true }));
    expect(signal.aborted).toBe(false);
    source.abort();
    expect(signal.aborted).toBe(false);
  });

  it('still fires after a garbage collection when only its listener references it', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', 'libs/shared/jobs/test/fixtures/deadline-after-gc.ts'],
      {
        timeout: 20_000,
      },
    );
    expect(JSON.parse(stdout)).toEqual({ fired: 50, of: 50 });
  });
});
