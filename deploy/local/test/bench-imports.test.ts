import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The test helpers (files under a `test/` folder) that the benchmark scripts import. */
function testHelpersOfBench(): string[] {
  const found = new Set<string>();
  for (const f of readdirSync(`${root}bench`).filter((n) => n.endsWith('.ts'))) {
    for (const m of readFileSync(`${root}bench/${f}`, 'utf8').matchAll(/from '\.\.\/([^']*\/test\/[^']*)'/g)) {
      found.add(m[1] as string);
    }
  }
  return [...found].sort();
}

describe('benchmark scripts outside Vitest', () => {
  it('when bench/ imports a test helper, then that helper loads under plain tsx (no vitest import on its path)', () => {
    const helpers = testHelpersOfBench();
    expect(helpers).toContain('services/relay/test/relay-harness.ts');
    const script = helpers.map((h) => `await import(${JSON.stringify(`${root}${h}`)});`).join('\n');
    // Throws (non-zero exit) when a helper pulls in vitest, which fails at load outside its runner.
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      stdio: 'pipe',
      env: { ...process.env, VITEST: '', VITEST_POOL_ID: '', VITEST_WORKER_ID: '' },
      timeout: 60_000,
    });
  }, 90_000);
});
