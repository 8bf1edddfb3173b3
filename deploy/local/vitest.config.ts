// Minimal Vitest config for deploy/local alone:
//   npx vitest run --config deploy/local/vitest.config.ts
// The repository's root vitest.config.ts also includes deploy/local/test/**/*.test.ts.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
    // The first `infra.sh up` can start Kafka (~10 s) or even build FerretDB (minutes).
    hookTimeout: 15 * 60_000,
    testTimeout: 60_000,
  },
});
