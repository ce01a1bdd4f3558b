import { defineConfig } from 'vitest/config';
import { SUITES, sharedTest } from './vitest.shared.ts';

// `npm run test:browser`: the web console in Debian's Chromium, against the product as a real process.
export default defineConfig({ test: { ...sharedTest, include: [...SUITES.browser], testTimeout: 60_000 } });
