import { defineConfig } from 'vitest/config';
import { SUITES, sharedTest } from './vitest.shared.ts';

// `npm run test:ops`: the monitoring stack and the manifests, with the tools .ci/run installs.
export default defineConfig({ test: { ...sharedTest, include: [...SUITES.ops] } });
