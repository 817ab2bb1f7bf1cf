import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (pure, no I/O) and `integration` (through the emulators or LocalStack).
 * `npm test` runs both; `npm run test:unit` / `npm run test:integration` run one.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          // Unit tests first (fast feedback), then the integration tests with their own worker cap.
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Two cores: keep the emulators from being starved by too many workers.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
