/**
 * Memory kept per operation, for leak tests: the heap in use after a forced full collection,
 * before and after `count` operations, divided by `count`. Run in a process of its own started
 * with `node --expose-gc` (runGcFixture), so that nothing else of a test runner's heap moves
 * the figure. A warm-up first fills the caches and pools that legitimately grow to a plateau.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const gcOf = (): (() => void) => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  return gc;
};

/** Heap used after full collections, with the event loop turned between them (finalizers, weak refs). */
export async function settledHeapUsed(): Promise<number> {
  const gc = gcOf();
  for (let i = 0; i < 4; i += 1) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().heapUsed;
}

export interface RetainedPerOp {
  /** Bytes of heap kept per operation (negative when the heap shrank). */
  bytesPerOp: number;
  count: number;
  heapBefore: number;
  heapAfter: number;
}

/** Runs `op` `warmup` times, then `count` times between two settled heap readings. */
export async function retainedPerOp(
  op: (i: number) => Promise<void>,
  count: number,
  warmup = Math.ceil(count / 10),
): Promise<RetainedPerOp> {
  for (let i = 0; i < warmup; i += 1) await op(i);
  const heapBefore = await settledHeapUsed();
  for (let i = 0; i < count; i += 1) await op(warmup + i);
  const heapAfter = await settledHeapUsed();
  return { bytesPerOp: (heapAfter - heapBefore) / count, count, heapBefore, heapAfter };
}

/** Prints the measure as the fixture's one line of output (read by runGcFixture). */
export function reportRetained(measure: RetainedPerOp): void {
  process.stdout.write(`${JSON.stringify(measure)}\n`);
}

const run = promisify(execFile);

/** Runs a fixture script under `node --expose-gc --import tsx` and returns what it reported. */
export async function runGcFixture(script: string, args: readonly string[] = [], timeoutMs = 120_000): Promise<RetainedPerOp> {
  const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', script, ...args], {
    timeout: timeoutMs,
    env: process.env,
    maxBuffer: 1 << 20,
  });
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as RetainedPerOp;
}
