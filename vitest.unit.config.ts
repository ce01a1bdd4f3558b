import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:unit`: the fast, deterministic tier, the tests that need no Redis, no socket, no
 * name resolution and no process (pure rules, parsers, encoders, schemas, the documentation's
 * own checks). It runs in well under 30 s without any service; `npm test` runs these files too,
 * with everything else.
 *
 * How a file is chosen: it is listed here, by its directory when every file there qualifies, else
 * by name. The guard (libs/testkit/src/no-io.ts) makes any listed file fail that opens a socket
 * (Redis, HTTP, fetch, DNS or SMTP rigs), listens, resolves a name or starts a process, so the
 * list cannot silently take in a slow test. A list rather than a file-name convention: renaming
 * the files would break every link to them; a new I/O-free test is added here by hand. Left out
 * though I/O-free: the QR encoder's equivalence with node-qrcode, the QR scan round trip and the
 * CSV upload reader (tens of seconds of CPU between them: `npm test` only).
 */
export const UNIT_TESTS = [
  'clients/console/test/csv.test.ts',
  'clients/console/test/price.test.ts',
  'clients/verify-list/test/options.test.ts',
  'clients/verify-list/test/progress.test.ts',
  'libs/shared/backend/test/memory-ttl-cache.test.ts',
  'libs/shared/config/test/**/*.test.ts',
  'libs/shared/contracts/test/**/*.test.ts',
  'libs/shared/jobs/test/job-protocol.test.ts',
  'libs/shared/lists/test/csv-columns.test.ts',
  'libs/shared/lists/test/processor.test.ts',
  'libs/shared/metering/test/billing.test.ts',
  'libs/shared/webhooks/test/callback-url.test.ts',
  'libs/shared/webhooks/test/schedule.test.ts',
  'libs/shared/webhooks/test/signature.test.ts',
  // The guard's own test: in this tier only.
  'libs/testkit/unit/**/*.test.ts',
  'services/gateway/test/auth/**/*.test.ts',
  'services/gateway/test/errors/**/*.test.ts',
  'services/gateway/test/operations/**/*.test.ts',
  'services/qr-worker/test/bit-transpose.test.ts',
  'services/qr-worker/test/mask-penalty.test.ts',
  'services/qr-worker/test/reed-solomon.test.ts',
  'services/qr-worker/test/schemas.test.ts',
  'services/qr-worker/test/segmentation.test.ts',
  'services/qr-worker/test/svg-path.test.ts',
  'services/qr-worker/test/symbol.test.ts',
  'services/verify-worker/test/cache/**/*.test.ts',
  'services/verify-worker/test/checks/**/*.test.ts',
  'services/verify-worker/test/health/**/*.test.ts',
  'services/verify-worker/test/dns/answer-ttl.test.ts',
  'services/verify-worker/test/docs.test.ts',
  'services/verify-worker/test/engine/egress-pool.test.ts',
  'services/verify-worker/test/engine/host-limiter.test.ts',
  'services/verify-worker/test/smtp/reply-parser.test.ts',
  'test/docs/configuration.test.ts',
  'test/docs/links.test.ts',
  'test/lists/defaults.test.ts',
  'clients/console/test/price.test.ts',
  'clients/console/test/qr-draw.test.ts',
  'libs/shared/feedback/test/calibration.test.ts',
  'libs/shared/feedback/test/effects.test.ts',
  'libs/shared/feedback/test/probability.test.ts',
  'libs/shared/feedback/test/sources.test.ts',
  'services/gateway/test/json-body/shape-scan.test.ts',
  'services/verify-worker/test/politeness/provider-budgets.test.ts',
  'clients/console/test/results.test.ts',
  'clients/console/test/feedback-csv.test.ts',
  'clients/console/test/models.test.ts',
];

// A file renamed or removed must leave the list too: a stale entry would shrink the tier unnoticed.
const missing = UNIT_TESTS.filter((entry) => !entry.includes('*') && !existsSync(entry));
if (missing.length > 0) throw new Error(`vitest.unit.config.ts lists files that do not exist: ${missing.join(', ')}`);

export default defineConfig({
  test: {
    include: UNIT_TESTS,
    exclude: ['**/node_modules/**'],
    // No globalSetup: this tier finds no Redis and starts nothing.
    setupFiles: ['libs/testkit/src/no-io.ts'],
    // As npm test's: a busy machine must not turn a slow property run into a failure.
    testTimeout: 30_000,
    pool: 'threads',
    // Every file is CPU-bound: one worker per core (vitest's default leaves one core idle).
    maxWorkers: 2,
    // Pure files share their module cache: most of the tier's time is loading zod and the packages.
    isolate: false,
  },
});
