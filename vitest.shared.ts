import type { ViteUserConfig } from 'vitest/config';

/**
 * What every suite shares. Test files run in parallel processes against one Redis; each file takes
 * its own key prefix (see libs/testkit/src/redis.ts), so they never see each other's queues or
 * counters.
 */
export const sharedTest = {
  globalSetup: ['libs/testkit/src/global-setup.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks',
  // Most files spend their time waiting (slow mail servers, deadlines, worker takeovers), so six
  // run side by side even on two cores; and a worker process keeps the modules it loaded from one
  // file to the next (no test mocks a module, stubs the environment or fakes timers, and each
  // takes its own Redis prefix). The suite here: 173 s with two isolated workers, 118 s with
  // four, 88 s with four that share their module cache. Once the services' processes ran built
  // (global setup) and CPU fell to about 165 s a run, six took 93 s where four took 107 s.
  maxWorkers: 6,
  isolate: false,
} satisfies ViteUserConfig['test'];

/**
 * The suites that need more than Node and a Redis, each run by its own npm script and by .ci/run,
 * and failing (never skipping) when what they need is missing:
 * - `test/ops`: Prometheus, promtool, the Redis exporter and kubectl (`npm run test:ops`).
 * - `test/browser`: Debian's Chromium at /usr/bin/chromium, driven by playwright-core (`npm run test:browser`).
 * - `test/topologies`: `redis-server` and `redis-cli`, to start a Redis Cluster and a Sentinel
 *   set of their own and fail their primaries (`npm run test:topologies`). With them, the lists'
 *   durability test (test/lists/faults.test.ts), which starts a `redis-server` of its own with an
 *   append-only file and restarts it mid-list: it needs the binary, not just a Redis, and was
 *   `npm test`'s longest file (67 s of a 200 s run).
 */
export const SUITES = {
  ops: ['test/ops/**/*.test.ts'],
  browser: ['test/browser/**/*.test.ts'],
  topologies: ['test/topologies/**/*.test.ts', 'test/lists/faults.test.ts'],
} as const;
