import { defineConfig } from 'vitest/config';

/**
 * Test projects:
 * - unit: pure code beside the sources (no servers), and the bench scripts' pure parts (bench/*.test.ts).
 * - integration: real MongoDB-compatible, Kafka and Redis servers (provided once by the global
 *   setup), real gRPC and HTTP between in-process services.
 * - console: the React console's own tests (console/vitest.config.ts).
 * - e2e: headless Chromium against a stack started by the test itself.
 *
 * deploy/local/bin/test.sh adds deploy/local/stack/durations-reporter.ts, which prints the ten
 * slowest files (hooks included) and writes every file's time to .local/test-durations.json.
 *
 * Integration and browser tests get one retry: they run whole stacks on a 2-core machine beside
 * the fault suite, and one failed run on CI blocks everything. A test that passes only on its
 * retry is not hidden: the reporter lists it as flaky at the very end of `npm test`'s output, and
 * a test that fails twice fails the run.
 */
export default defineConfig({
  test: {
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['services/*/src/**/*.test.ts', 'proto/src/**/*.test.ts', 'bench/*.test.ts'],
          exclude: ['services/common/src/grpc/**'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: [
            'services/*/test/**/*.test.ts',
            'services/common/src/grpc/**/*.test.ts',
            'deploy/local/test/**/*.test.ts',
          ],
          environment: 'node',
          globalSetup: ['deploy/local/stack/vitest-global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          retry: 1,
          pool: 'forks',
        },
      },
      'console/vitest.config.ts',
      {
        test: {
          name: 'e2e',
          include: ['console/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['deploy/local/stack/vitest-global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 240_000,
          retry: 1,
          // In the same pool as the integration files: a single fork ran the 13 browser files one
          // after the other once everything else had finished, with the other core idle (5 min).
          pool: 'forks',
        },
      },
    ],
  },
});
