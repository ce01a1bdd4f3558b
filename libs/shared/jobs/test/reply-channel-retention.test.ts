/**
 * The gateway's inbox keeps nothing of the answers it read (issue 32): every read once raced a
 * promise as long-lived as the inbox and left on it a reaction holding the batch it read, about
 * 4.7 KB per QR answer. Measured in a process of its own with `--expose-gc`: the heap in use after
 * a full collection, before and after 3,000 answers of 4 kB each, read one per read.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { dropPrefix, runGcFixture, testRedisUrl, uniquePrefix } from '@svc/testkit';

const fixture = fileURLToPath(new URL('./fixtures/inbox-retention.ts', import.meta.url));
const prefix = uniquePrefix('inbox-retention');
afterAll(() => dropPrefix(testRedisUrl(), prefix));

/** Bytes per answer read: measured 136 after the fix, 4,891 before (the 4 kB body and its reply object, kept per read). */
const BOUND_BYTES_PER_READ = 1_024;

describe('reply inbox memory', () => {
  it(`keeps at most ${BOUND_BYTES_PER_READ} bytes per answer read`, { timeout: 120_000 }, async () => {
    const measure = await runGcFixture(fixture, [testRedisUrl(), prefix]);
    expect(measure.count).toBe(3_000);
    expect(measure.bytesPerOp).toBeLessThan(BOUND_BYTES_PER_READ);
  });
});
