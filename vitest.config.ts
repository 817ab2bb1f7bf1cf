import { fileURLToPath } from 'node:url';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import LongestFirst from './test/support/sequencer.ts';

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
 * Four projects: `unit` (pure, no I/O), `integration` (test/integration/guarantees and features,
 * through the emulators or LocalStack), `tooling` (test/integration/tooling: the CLI, the local
 * runtime, the dashboard, the packed packages, the docs' examples, the deploy to moto; each spawns
 * processes and takes minutes on two cores) and `soak` (a minute of steady load). `npm test` runs
 * unit and integration; `npm run test:tooling` and `npm run test:soak` run the others, and CI runs
 * all four (`.ci/run`). docs/testing.md has the layout and how long each takes.
 */
export default defineConfig({
  test: {
    // The default output, then why each skipped test was skipped (test/support/skip-reasons.ts).
    reporters: ['default', fileURLToPath(new URL('./test/support/skip-reasons.ts', import.meta.url))],
    // The integration files that take longest start first, so the two workers end together.
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          // Both cores (the default is one fewer than the machine has: one worker here). Unit tests
          // do no I/O worth waiting for, so two workers halve the wall time on two cores.
          maxWorkers: 2,
          // One module graph per worker instead of one per file: aws-cdk-lib, the SDK and the
          // engine are evaluated once per worker, not for each of the stack tests (half the
          // project's CPU time). Safe because no unit test mocks a module or leaves a global
          // changed (the simulation restores what it replaces); docs/testing.md says so.
          isolate: false,
          // No assertion is timed: a synthesized stack takes seconds on a loaded two-core machine.
          testTimeout: 60_000,
          hookTimeout: 60_000,
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
          include: ['test/integration/guarantees/**/*.test.ts', 'test/integration/features/**/*.test.ts'],
          exclude: ['test/integration/guarantees/soak.test.ts'],
          // One module graph per worker, as for unit tests: the SDK, the product and the setup file
          // are evaluated once per worker instead of once per file (a quarter of the project's CPU
          // time). Safe because every file that spies on a global or sets the environment restores
          // it in afterEach/finally, and the call recorder installs itself once (docs/testing.md).
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...integration,
          name: 'tooling',
          // The same emulators and the same policy proof of every call as the integration project.
          globalSetup: ['test/support/global-setup.ts', 'test/support/policy-global-setup.ts'],
          setupFiles: ['test/support/record-calls.ts'],
          include: ['test/integration/tooling/**/*.test.ts'],
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          ...integration,
          name: 'soak',
          include: ['test/integration/guarantees/soak.test.ts'],
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
