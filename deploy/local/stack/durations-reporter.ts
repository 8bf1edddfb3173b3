/**
 * A Vitest reporter that keeps the time of every test file, hooks included (stacks start in
 * beforeAll and stop in afterAll: Vitest's JSON reporter counts only the tests themselves), so that
 * a slow file is found by reading one list instead of guessing. At the end of the run it prints the
 * ten slowest files and the sums per project, and writes every file to
 * `.local/test-durations.json` (git-ignored) for docs/development.md's table.
 *
 * It also writes `.local/test-outcome.txt`: every failed test with its first error lines, and every
 * test that failed once and passed on its retry (flaky). deploy/local/bin/test.sh prints that file
 * last, after the fault suite's long report, so that the tail of a CI log names what failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Reporter, TestCase, TestModule } from 'vitest/node';

const ROOT = resolve(import.meta.dirname, '../../..');

interface FileTime {
  file: string;
  project: string;
  /** Import and collection of the file, then its tests and hooks. */
  ms: number;
  tests: number;
  state: string;
}

export default class DurationsReporter implements Reporter {
  private started = Date.now();

  onTestRunStart(): void {
    this.started = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const files: FileTime[] = modules.map((m) => {
      const d = m.diagnostic();
      return {
        file: relative(ROOT, m.moduleId),
        project: m.project.name,
        ms: Math.round(d.prepareDuration + d.collectDuration + d.setupDuration + d.duration),
        tests: [...m.children.allTests()].length,
        state: m.state(),
      };
    });
    files.sort((a, b) => b.ms - a.ms);
    const wallMs = Date.now() - this.started;
    const perProject: Record<string, { files: number; ms: number }> = {};
    for (const f of files) {
      const p = perProject[f.project] ?? { files: 0, ms: 0 };
      p.files++;
      p.ms += f.ms;
      perProject[f.project] = p;
    }
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const lines = [
      '',
      `Test files by time (hooks included), ${files.length} files, run ${s(wallMs)} wall:`,
      ...files
        .slice(0, 10)
        .map((f, i) => `  ${String(i + 1).padStart(2)}. ${s(f.ms).padStart(8)}  ${f.file} (${f.project})`),
      `  per project (file time summed over the workers): ${Object.entries(perProject)
        .map(([p, v]) => `${p} ${v.files} files ${s(v.ms)}`)
        .join(', ')}`,
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    const out = join(ROOT, '.local');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'test-outcome.txt'), outcome(modules));
    writeFileSync(
      join(out, 'test-durations.json'),
      `${JSON.stringify({ at: new Date().toISOString(), wallMs, perProject, files }, null, 2)}\n`,
    );
  }
}

function testsOf(modules: ReadonlyArray<TestModule>): { file: string; test: TestCase }[] {
  return modules.flatMap((m) => [...m.children.allTests()].map((test) => ({ file: relative(ROOT, m.moduleId), test })));
}

/** Failed tests (and files that failed outside a test, in a hook or at import), then flaky ones. */
export function outcome(modules: ReadonlyArray<TestModule>): string {
  const failed: string[] = [];
  const flaky: string[] = [];
  const firstLines = (message: string | undefined) =>
    (message ?? '')
      .split('\n')
      .filter((l) => l.trim())
      .slice(0, 3)
      .map((l) => `      ${l.slice(0, 300)}`);
  for (const m of modules) {
    for (const e of m.errors())
      failed.push(`  ${relative(ROOT, m.moduleId)} (outside a test)`, ...firstLines(e.message));
  }
  for (const { file, test } of testsOf(modules)) {
    const result = test.result();
    const retries = test.diagnostic()?.retryCount ?? 0;
    if (result.state === 'failed') {
      failed.push(`  ${file} > ${test.fullName}`, ...firstLines(result.errors?.[0]?.message));
    } else if (result.state === 'passed' && retries > 0) {
      flaky.push(`  ${file} > ${test.fullName} (passed on retry ${retries})`);
    }
  }
  const parts = [
    failed.length ? `Vitest: these failed:\n${failed.join('\n')}` : 'Vitest: no test failed.',
    flaky.length
      ? `Vitest: flaky (failed, then passed on its retry; a defect to fix):\n${flaky.join('\n')}`
      : 'Vitest: no test needed its retry.',
  ];
  return `${parts.join('\n')}\n`;
}
