/**
 * A list chunk keeps nothing on the signal it was handed (issue 32): the processor combined it
 * with the chunk's own cancel signal through `AbortSignal.any`, which on Node 20 stays registered
 * with a long-lived source (the embedded queue's shutdown signal), about 1.4 KB per chunk for the
 * life of the process. Measured in a process of its own with `--expose-gc`: 5,000 one-address
 * lists, each let expire after it completed; what remains per chunk is the meter's ledger of the list.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runGcFixture } from '@svc/testkit';

const fixture = fileURLToPath(new URL('./fixtures/chunk-retention.ts', import.meta.url));

/** Bytes per chunk: measured 175 after the fix (the in-memory meter's ledger of each list), 1,427 before. */
const BOUND_BYTES_PER_CHUNK = 600;

describe('list processor memory', () => {
  it(`keeps at most ${BOUND_BYTES_PER_CHUNK} bytes per chunk handled with a long-lived signal`, { timeout: 120_000 }, async () => {
    const measure = await runGcFixture(fixture);
    expect(measure.count).toBe(5_000);
    expect(measure.bytesPerOp).toBeLessThan(BOUND_BYTES_PER_CHUNK);
  });
});
