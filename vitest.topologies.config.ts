import { defineConfig } from 'vitest/config';
import { SUITES, sharedTest } from './vitest.shared.ts';

// `npm run test:topologies`: the product on a Redis Cluster and on Sentinel, primaries frozen
// under load. One file at a time: each topology is a dozen processes on a two-core machine.
export default defineConfig({
  test: { ...sharedTest, include: [SUITES.topologies], maxWorkers: 1, testTimeout: 120_000, hookTimeout: 120_000 },
});
