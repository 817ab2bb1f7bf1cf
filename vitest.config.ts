import { fileURLToPath } from 'node:url';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/** The integration projects' shared settings: the emulators, long timeouts, two workers. */
const integration: TestProjectInlineConfiguration['test'] = {
  environment: 'node',
  globalSetup: ['test/support/global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // Two cores: keep the emulators from being starved by too many workers.
  maxWorkers: 2,
};

/**
 * Three projects: `unit` (pure, no I/O), `integration` (through the emulators or LocalStack) and
 * `soak` (a minute of steady load, through the emulators). `npm test` runs unit and integration;
 * `npm run test:soak` runs the soak (CI runs it as its own step, `.ci/run`).
 */
export default defineConfig({
  test: {
    // The default output, then why each skipped test was skipped (test/support/skip-reasons.ts).
    reporters: ['default', fileURLToPath(new URL('./test/support/skip-reasons.ts', import.meta.url))],
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
          ...integration,
          name: 'integration',
          // Every AWS call the suite makes is recorded, and after it each call a function makes is
          // evaluated against the synthesized policies: a call AWS would deny fails the run.
          globalSetup: ['test/support/global-setup.ts', 'test/support/policy-global-setup.ts'],
          setupFiles: ['test/support/record-calls.ts'],
          include: ['test/integration/**/*.test.ts'],
          exclude: ['test/integration/guarantees/soak.test.ts'],
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...integration,
          name: 'soak',
          include: ['test/integration/guarantees/soak.test.ts'],
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
