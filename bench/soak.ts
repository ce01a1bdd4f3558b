/**
 * `npm run bench:soak`: the built product under a steady mixed load for minutes, its memory
 * sampled as it goes (soak/soak-run.ts), reported per minute with slopes per hour and a verdict
 * per process, "flat" or "grows" (soak/soak-report.ts). Run `npm run build` first.
 *
 * BENCH_MODES (default `distributed,embedded`), BENCH_DURATION_S (default 300 per mode),
 * BENCH_SAMPLE_S (15), BENCH_QR_PER_S (100), BENCH_BATCHES_PER_S (1, of 20 new addresses),
 * BENCH_LIST_EVERY_S (60, lists of BENCH_LIST_SIZE = 500 new addresses), BENCH_TOOL_EVERY_S (5).
 * Exits 1 when a process grows by more than BENCH_BOUND_KIB_PER_1000 (256) KiB of heap per 1,000 requests.
 */
import { existsSync } from 'node:fs';
import { minuteTable, slopeTable, verdicts } from './soak/soak-report.ts';
import { runSoak, type SoakMode } from './soak/soak-run.ts';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const modes = (process.env.BENCH_MODES ?? 'distributed,embedded').split(',') as SoakMode[];
const bound = env('BENCH_BOUND_KIB_PER_1000', 256) * 1_024;

if (!existsSync('services/gateway/dist/main.js') || !existsSync('scripts/dist/start.js')) {
  console.error('Build the product first: npm run build');
  process.exit(2);
}

let grows = false;
for (const mode of modes) {
  const result = await runSoak({
    mode,
    durationS: env('BENCH_DURATION_S', 300),
    sampleS: env('BENCH_SAMPLE_S', 15),
    qrPerS: env('BENCH_QR_PER_S', 100),
    batchesPerS: env('BENCH_BATCHES_PER_S', 1),
    listEveryS: env('BENCH_LIST_EVERY_S', 60),
    listSize: env('BENCH_LIST_SIZE', 500),
    toolEveryS: env('BENCH_TOOL_EVERY_S', 5),
    log: (line) => console.error(line),
  });
  console.log(`\n== ${mode}: answered ${JSON.stringify(result.answered)}, failed ${JSON.stringify(result.failed)}`);
  console.table(minuteTable(result));
  console.table(slopeTable(result, bound));
  if (verdicts(result, bound).some((v) => v.verdict === 'grows')) grows = true;
}
process.exitCode = grows ? 1 : 0;
