import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The test helpers that the benchmark scripts import: files under a `test/` folder (as absolute
 * paths) and the @aigw/testkit entries (as package specifiers, resolved from the repository root).
 */
function testHelpersOfBench(): string[] {
  const found = new Set<string>();
  for (const f of readdirSync(`${root}bench`).filter((n) => n.endsWith('.ts'))) {
    const text = readFileSync(`${root}bench/${f}`, 'utf8');
    for (const m of text.matchAll(/from '\.\.\/([^']*\/test\/[^']*)'/g)) found.add(`${root}${m[1]}`);
    for (const m of text.matchAll(/from '(@aigw\/testkit[^']*)'/g)) found.add(m[1] as string);
  }
  return [...found].sort();
}

describe('benchmark scripts outside Vitest', () => {
  it('when bench/ imports a test helper, then that helper loads under plain tsx (no vitest import on its path)', () => {
    const helpers = testHelpersOfBench();
    expect(helpers).toContain('@aigw/testkit/harness');
    const script = helpers.map((h) => `await import(${JSON.stringify(h)});`).join('\n');
    // Throws (non-zero exit) when a helper pulls in vitest, which fails at load outside its runner.
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      stdio: 'pipe',
      env: { ...process.env, VITEST: '', VITEST_POOL_ID: '', VITEST_WORKER_ID: '' },
      timeout: 60_000,
    });
  }, 90_000);
});
