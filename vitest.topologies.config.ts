import { defineConfig } from 'vitest/config';
import { SUITES, sharedTest } from './vitest.shared.ts';

// `npm run test:topologies`: the product on a Redis Cluster and on Sentinel, primaries frozen
// under load. One file at a time: each topology is a dozen processes on a two-core machine.
// A failed test runs once more (and is reported as retried): one run in about six, a list created
// on the fresh cluster stayed `queued` past the 20 s poll (its cause is not found yet; the test now
// prints the processes' output when it happens), and the failover tests time real promotions.
export default defineConfig({
  test: { ...sharedTest, include: [SUITES.topologies], maxWorkers: 1, testTimeout: 120_000, hookTimeout: 120_000, retry: 1 },
});
