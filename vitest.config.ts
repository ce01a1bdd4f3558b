import { defineConfig } from 'vitest/config';
import { SUITES, sharedTest } from './vitest.shared.ts';

// `npm test`: every test that needs only Node and a Redis. The suites in SUITES run apart.
export default defineConfig({
  test: {
    ...sharedTest,
    include: [
      'libs/*/test/**/*.test.ts',
      'libs/shared/*/test/**/*.test.ts',
      'services/*/test/**/*.test.ts',
      'clients/*/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', ...Object.values(SUITES).flat()],
    coverage: {
      provider: 'v8',
      include: ['libs/shared/*/src/**/*.ts', 'services/*/src/**/*.ts'],
      exclude: ['**/main.ts', '**/index.ts', '**/types.ts'],
      reporter: ['text-summary'],
      // Every package and service together must stay covered (lines 85 %), and the pure heart of
      // verification (checks, the reply table, the SMTP conversation) more strictly: the run fails
      // when either drops below its figures.
      thresholds: {
        lines: 85,
        'services/verify-worker/src/checks/**': { statements: 95, branches: 90, functions: 95, lines: 95 },
        'services/verify-worker/src/smtp/**': { statements: 90, branches: 80, functions: 85, lines: 95 },
      },
    },
  },
});
