import { defineConfig } from 'vitest/config';
import { SUITES, sharedTest } from './vitest.shared.ts';

// `npm run test:topologies`: the product on a Redis Cluster and on Sentinel, primaries frozen
// under load. One file at a time: each topology is a dozen processes on a two-core machine.
// A failed test runs once more (and is reported as retried): the failover tests time real
// promotions. (A list created on the fresh cluster that stayed `queued` past the 20 s poll, one run
// in about six, was the gateway's list queue opened before its connection was ready:
// list-queue-start.test.ts.)
export default defineConfig({
  test: { ...sharedTest, include: [...SUITES.topologies], maxWorkers: 1, testTimeout: 120_000, hookTimeout: 120_000, retry: 1 },
});
